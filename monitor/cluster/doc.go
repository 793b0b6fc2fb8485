// Package cluster lets several `gsq monitor` workers, on one machine or
// many and in several regions, share the servers to poll through NATS
// JetStream, as issue 23 and shared/notes/monitor-scale-notes.md §4
// describe.
//
// Servers hash into [Shards] fixed shards ([ShardOf]). In each region,
// a [Worker] keeps a membership key alive in the bucket
// gsq_<fleet>_members_<region> (its TTL is the lease length; the fleet,
// [Options.Fleet], keeps two fleets on one NATS apart) and computes, over
// the live members, the rendezvous owner of every shard ([Owner]). It
// holds the shards it owns by leases in gsq_<fleet>_leases_<region>: Create to
// take one, Update with the last revision to renew it, Delete on that
// revision to hand it over to the new owner when a member joins. The
// revision of the Create is the lease's epoch, the fencing token that
// the PostgreSQL writes made for the shard check (package store's
// Cluster), so a worker paused past its lease cannot commit as the owner
// when it wakes.
//
// The alert of a transition committed in PostgreSQL is a job in the
// fleet's work-queue stream gsq_<fleet>_deliveries, which one worker
// takes, claims in the outbox and delivers once (deliver.go).
//
// Only NATS 2.9 features are used (KV buckets with a bucket TTL, compare
// and set on the subject's last sequence): Debian's nats-server 2.9.10
// and current servers both work. A lease that expires on 2.9 produces no
// event, so the owner retries Create every heartbeat.
//
// The JetStream API is github.com/nats-io/nats.go's jetstream package
// (https://github.com/nats-io/nats-architecture-and-design, ADR-8 for
// the key-value store).
package cluster
