// Package monitor is what `gsq monitor` knows and decides, apart from
// where the polls come from and where the history goes.
//
//   - The config: [Loader] reads monitor.yaml, the flags and the target
//     lists into a [Config], every problem at its line; [Diff] says
//     what a reload changes. docs/monitor-config.md documents it.
//   - The step from a poll to a server's state: a [Tracker] per server
//     takes each [Poll] and returns the [ServerState] and the [Event]s it
//     makes (up and down, with [Health]'s thresholds; who joined and left,
//     as a multiset of names; the map). It is pure: its clock is the
//     polls' times, it starts no goroutine and does no I/O, and its state
//     is plain data ([Snapshot]) that another process can carry on from.
//   - Alerts: the rules turn events, and nothing else, into [Alert]s; an
//     [Alerter] delivers them through one [Provider] per webhook format,
//     each in a file of its own (alert_json.go, alert_discord.go,
//     alert_slack.go).
//
// The poller (package monitor/poller) runs the polls on the scan engine,
// hands each to its server's Tracker, writes the history to a
// store.Store and publishes the events; package web serves them.
package monitor
