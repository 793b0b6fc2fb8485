package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/gsq-project/gsq/monitor"
)

// Deliveries go through a work queue; polls do not (worker.go says why).
// The alert of a committed transition is a one-off job: it needs none of
// the server's state in memory (the outbox row says what to send), any
// worker of the fleet may do it, and it must be done once, whoever
// committed the transition and whether or not that worker lives on. A
// JetStream stream with the work-queue policy is that: one copy of the
// job, handed to one of the workers that share its durable consumer,
// removed when acknowledged, handed again to another if the first dies
// before it acknowledges.
//
// The exactly-once guarantee stays in PostgreSQL, not in NATS: the worker
// that takes a job claims the outbox row (store.Cluster.MarkSent, a
// conditional UPDATE) before it hands the alert to its alerter, so that a
// job published twice, redelivered after its ack wait, or published again
// after its duplicates window, is delivered once, and dropped after. The
// queue only says who does the job and when; the row says whether it is
// done. The winner of the compare-and-set publishes the job right after
// the commit; the holder of the server's shard scans the outbox each
// heartbeat and publishes again the jobs of transitions still unsent
// after three heartbeats (their worker died between commit and publish,
// or NATS was down): same Nats-Msg-Id, SERVER:SEQ, so within the stream's
// duplicates window the two are one job. A worker that dies after its
// claim and before the hand-over loses that alert, as it would lose the
// alerts its alerter holds in memory: the claim is what keeps a second
// worker from sending it again.
//
// Limits, so that a fleet without workers to consume, or a flood of
// transitions, bounds what NATS keeps: a job lives 24 h at most (its
// alert is stale after), the stream holds 100,000 jobs and 64 MiB at
// most and refuses new ones beyond (DiscardNew: the outbox scan publishes
// them again later, where DiscardOld would drop the oldest silently). A
// job is handed out 10 times at most: a worker that cannot reach
// PostgreSQL gives it back with a growing delay (5 s per attempt, up to a
// minute), some five minutes in all; past that, the outbox scan
// publishes it again once PostgreSQL is back and the duplicates window
// (2 min) has passed. A worker paused (SIGSTOP, a VM freeze) while its
// fetch was waiting, 5 s at most, may be handed a job it then holds for
// the ack wait, 30 s, before another worker takes it: an alert late by
// half a minute, not lost. Everything here works on NATS 2.9.
const (
	deliverConsumer      = "deliverers" // the durable consumer that every worker shares
	deliverAckWait       = 30 * time.Second
	deliverMaxDeliver    = 10
	deliverMaxAckPending = 256
	deliverBatch         = 16
	deliverFetchWait     = 5 * time.Second
	deliverMaxAge        = 24 * time.Hour
	deliverMaxMsgs       = 100_000
	deliverMaxBytes      = 64 << 20
	deliverMaxMsgSize    = 4 << 10 // a job is a server's name and a number
	deliverDuplicates    = 2 * time.Minute
	deliverRetry         = 5 * time.Second // per attempt, when PostgreSQL fails
)

// errNATSAway is the error of a publish not tried: the connection to
// NATS is down.
var errNATSAway = errors.New("not connected to NATS")

// job is a delivery job: the transition whose alert to deliver.
type job struct {
	Server string `json:"server"`
	Seq    int64  `json:"seq"`
}

// key is the job's Nats-Msg-Id, SERVER:SEQ: the alert's X-Gsq-Delivery.
func (j job) key() string { return j.Server + ":" + strconv.FormatInt(j.Seq, 10) }

// deliveries names the fleet's stream of delivery jobs and its subject:
// gsq_<fleet>_deliveries and gsq.<fleet>.deliver.
func (o *Options) deliveries() (stream, subject string) {
	if o.Fleet == "" {
		return "gsq_deliveries", "gsq.deliver"
	}
	return "gsq_" + o.Fleet + "_deliveries", "gsq." + o.Fleet + ".deliver"
}

// openDeliveries creates or opens the fleet's stream of delivery jobs
// and its shared consumer.
func openDeliveries(ctx context.Context, js jetstream.JetStream, opts *Options) (jetstream.Consumer, error) {
	stream, subject := opts.deliveries()
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: stream, Subjects: []string{subject},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Replicas: opts.Replicas,
		MaxAge: deliverMaxAge, MaxMsgs: deliverMaxMsgs, MaxBytes: deliverMaxBytes, MaxMsgSize: deliverMaxMsgSize,
		Discard: jetstream.DiscardNew, Duplicates: deliverDuplicates,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: stream %s: %w", stream, err)
	}
	c, err := js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
		Durable: deliverConsumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: deliverAckWait,
		MaxDeliver: deliverMaxDeliver, MaxAckPending: deliverMaxAckPending,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: consumer %s of %s: %w", deliverConsumer, stream, err)
	}
	return c, nil
}

// publishJob puts a delivery job in the fleet's queue. It reports whether
// the job is new: false when the stream already had it within its
// duplicates window.
func publishJob(ctx context.Context, js jetstream.JetStream, opts *Options, j job) (bool, error) {
	_, subject := opts.deliveries()
	data, _ := json.Marshal(j)
	ack, err := js.Publish(ctx, subject, data, jetstream.WithMsgID(j.key()))
	if err != nil {
		return false, err
	}
	return !ack.Duplicate, nil
}

// enqueue publishes the delivery job of a transition, and reports
// whether the stream took it as a new job. A failure is logged and
// counted.
func (n *Node) enqueue(ctx context.Context, j job) (bool, error) {
	if !n.js.Conn().IsConnected() {
		// Not a wait of opCtx per transition while NATS is away (a
		// quorum of one may commit many then): the outbox scan publishes
		// the jobs when it is back.
		err := fmt.Errorf("the delivery of %s is not published: %w", j.key(), errNATSAway)
		n.natsError("deliveries", err)
		return false, err
	}
	octx, cancel := n.opCtx(ctx)
	fresh, err := publishJob(octx, n.js, &n.Worker.opts, j)
	cancel()
	if err != nil {
		n.natsError("deliveries", fmt.Errorf("publishing the delivery of %s: %w", j.key(), err))
		return false, err
	}
	if fresh {
		n.count(func(s *NodeStats) { s.JobsPublished++ })
	}
	return fresh, nil
}

// deliver fetches delivery jobs and does them, a batch at a time, until
// ctx is done; after a failure to reach NATS it waits a heartbeat and
// opens the stream and its consumer again.
func (n *Node) deliver(ctx context.Context) {
	cons := n.jobs
	for ctx.Err() == nil {
		if cons == nil {
			octx, cancel := n.opCtx(ctx)
			c, err := openDeliveries(octx, n.js, &n.Worker.opts)
			cancel()
			if err != nil {
				n.natsError("deliveries", err)
				pause(ctx, n.Heartbeat())
				continue
			}
			cons = c
		}
		fctx, cancel := context.WithTimeout(ctx, deliverFetchWait)
		batch, err := cons.Fetch(deliverBatch, jetstream.FetchContext(fctx))
		if err == nil {
			for msg := range batch.Messages() {
				n.deliverJob(ctx, msg)
			}
			err = batch.Error()
		}
		cancel()
		if err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
			n.natsError("deliveries", err)
			cons = nil
			pause(ctx, n.Heartbeat())
		}
	}
}

// pause waits d, or until ctx is done.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// deliverJob does one delivery job: it claims the transition's outbox
// row, hands the alert to this node's alerter and acknowledges the job; a
// job whose row another worker claimed first is acknowledged and dropped;
// one that PostgreSQL could not claim is given back, to be tried again
// after a delay.
func (n *Node) deliverJob(ctx context.Context, msg jetstream.Msg) {
	if ctx.Err() != nil {
		_ = msg.Nak() // stopping: another worker takes it at once
		return
	}
	var j job
	if err := json.Unmarshal(msg.Data(), &j); err != nil || j.Server == "" || j.Seq <= 0 {
		n.log.Printf("deliveries", "cluster %s/%s: not a delivery job, dropped: %.100q", n.Region(), n.ID(), msg.Data())
		_ = msg.Term()
		return
	}
	attempt := uint64(1)
	if meta, err := msg.Metadata(); err == nil {
		attempt = max(attempt, meta.NumDelivered)
	}
	if attempt > 1 {
		n.count(func(s *NodeStats) { s.JobsRedelivered++ })
	}
	n.mu.Lock()
	_, known := n.servers[j.Server]
	n.mu.Unlock()
	if !known {
		// Not in this node's config yet (a reload on its way): its
		// alerter would drop the alert. Given back unclaimed, for a node
		// that knows the server, or this one after its reload.
		_ = msg.NakWithDelay(min(time.Duration(attempt)*deliverRetry, time.Minute))
		return
	}
	// Bounded well within the ack wait, so that the job is not handed to
	// another worker while this one still claims it.
	pctx, cancel := context.WithTimeout(ctx, deliverAckWait/3)
	e, claimed, err := n.opts.Store.MarkSent(pctx, j.Server, j.Seq, time.Now())
	cancel()
	switch {
	case err != nil && ctx.Err() != nil:
		_ = msg.Nak() // stopping: another worker takes it at once
		return
	case err != nil:
		delay := min(time.Duration(attempt)*deliverRetry, time.Minute)
		n.log.Printf("outbox", "cluster %s/%s: the delivery of %s, attempt %d: %v; trying again in %v", n.Region(), n.ID(), j.key(), attempt, err, delay)
		_ = msg.NakWithDelay(delay)
		return
	case !claimed:
		// Delivered already, by this worker or another (a job published
		// twice, or redelivered after a lost ack).
		n.count(func(s *NodeStats) { s.JobsDropped++ })
		_ = msg.Ack()
		return
	}
	n.alert(monitor.Verdict{Server: e.Server, Down: e.Kind == "down", Time: e.At, Since: e.Since, Seq: e.Seq})
	_ = msg.Ack()
}
