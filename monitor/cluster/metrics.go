package cluster

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// A worker's series on /metrics (issue 23): whether it reaches NATS, the
// leases it holds and the shards it should own, so that a fleet that
// lost NATS, or whose shares are uneven, shows on a dashboard.
var (
	descNATSUp = prometheus.NewDesc("gsq_fleet_nats_up",
		"1 when the worker's last heartbeat reached NATS, 0 when it could not: it then polls the shards it holds until their leases would expire, and takes shards again when NATS is back.",
		[]string{"region", "worker"}, nil)
	descLeasesHeld = prometheus.NewDesc("gsq_fleet_leases_held",
		"Shard leases the worker holds now: the shards whose servers it polls.", []string{"region", "worker"}, nil)
	descShardsOwned = prometheus.NewDesc("gsq_fleet_shards_owned",
		"Shards whose rendezvous owner among the region's live members is the worker: what it should hold once hand-overs settle.",
		[]string{"region", "worker"}, nil)
	descMembers = prometheus.NewDesc("gsq_fleet_members",
		"Live members of the region, as the worker saw them at its last heartbeat.", []string{"region", "worker"}, nil)
	descLeases = prometheus.NewDesc("gsq_fleet_leases_total",
		"Lease events of the worker: acquired, lost (its renewal refused or expired unrenewed) and handed_over (given back to the shard's new owner).",
		[]string{"region", "worker", "event"}, nil)
	descNATSErrors = prometheus.NewDesc("gsq_fleet_nats_errors_total",
		"NATS operations of the worker that failed.", []string{"region", "worker"}, nil)
	descFenced = prometheus.NewDesc("gsq_fleet_writes_fenced_total",
		"Writes of the worker that PostgreSQL refused because another worker holds the shard's lease since (verdicts, partial outages, batches of samples): the worker drops the shard.",
		[]string{"region", "worker"}, nil)
	descSamplesFenced = prometheus.NewDesc("gsq_fleet_samples_fenced_total",
		"Samples the worker polled under a lease another worker took since, dropped unwritten.", []string{"region", "worker"}, nil)
	descDeliveries = prometheus.NewDesc("gsq_fleet_deliveries_total",
		"Alert delivery jobs of the fleet's work queue, by what the worker did: published (put in the queue, duplicates not counted; resent: of those, by the outbox scan, for transitions still unsent), delivered (claimed and handed to its alerter), redelivered (taken again after a failed or unacknowledged attempt), dropped (claimed already: a job published twice).",
		[]string{"region", "worker", "event"}, nil)
)

// owned counts the shards whose rendezvous owner among the live members
// (and the worker itself) is the worker.
func (w *Worker) owned() int {
	w.mu.Lock()
	members := slices.Clone(w.live)
	w.mu.Unlock()
	if !slices.Contains(members, w.opts.ID) {
		members = append(members, w.opts.ID)
	}
	n := 0
	for s := range Shards {
		if Owner(s, members) == w.opts.ID {
			n++
		}
	}
	return n
}

// Describe sends the descriptions of a worker's series; package web
// registers a Live that is a prometheus.Collector.
func (v *View) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descNATSUp, descLeasesHeld, descShardsOwned, descMembers, descLeases, descNATSErrors, descFenced, descSamplesFenced, descDeliveries} {
		ch <- d
	}
}

// Collect sends a worker's series; an API node, which holds nothing, has
// none.
func (v *View) Collect(ch chan<- prometheus.Metric) {
	if v.node == nil {
		return
	}
	w := v.node.Worker
	st := w.Stats()
	labels := []string{w.Region(), w.ID()}
	up := 1.0
	if st.NATSDown {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(descNATSUp, prometheus.GaugeValue, up, labels...)
	ch <- prometheus.MustNewConstMetric(descLeasesHeld, prometheus.GaugeValue, float64(st.Held), labels...)
	ch <- prometheus.MustNewConstMetric(descShardsOwned, prometheus.GaugeValue, float64(w.owned()), labels...)
	ch <- prometheus.MustNewConstMetric(descMembers, prometheus.GaugeValue, float64(st.Members), labels...)
	for _, e := range []struct {
		event string
		n     uint64
	}{{"acquired", st.Acquired}, {"lost", st.Lost}, {"handed_over", st.HandedOver}} {
		ch <- prometheus.MustNewConstMetric(descLeases, prometheus.CounterValue, float64(e.n), append(labels, e.event)...)
	}
	ch <- prometheus.MustNewConstMetric(descNATSErrors, prometheus.CounterValue, float64(st.NATSErrors), labels...)
	ns := v.node.NodeStats()
	ch <- prometheus.MustNewConstMetric(descFenced, prometheus.CounterValue, float64(ns.Fenced), labels...)
	ch <- prometheus.MustNewConstMetric(descSamplesFenced, prometheus.CounterValue, float64(v.SamplesFenced()), labels...)
	for _, e := range []struct {
		event string
		n     uint64
	}{{"published", ns.JobsPublished}, {"resent", ns.Resent}, {"delivered", ns.Alerts}, {"redelivered", ns.JobsRedelivered}, {"dropped", ns.JobsDropped}} {
		ch <- prometheus.MustNewConstMetric(descDeliveries, prometheus.CounterValue, float64(e.n), append(labels, e.event)...)
	}
}
