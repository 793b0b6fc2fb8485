package cluster

import (
	"encoding/binary"
	"hash/fnv"
)

// Shards is the number of shards the servers hash into. It never
// changes: more workers own fewer shards each, so no server ever moves
// because the fleet grew, only because its shard changed hands.
const Shards = 1024

// ShardOf is the shard of a server: FNV-1a (64 bits) of its name, modulo
// Shards. The name is the server's key everywhere in gsq monitor.
func ShardOf(server string) int {
	h := fnv.New64a()
	h.Write([]byte(server))
	return int(h.Sum64() % Shards)
}

// weight is the rendezvous weight of a member for a shard: FNV-1a of the
// member's id and the shard, finished with SplitMix64's mixer so that
// members whose ids differ in one character get unrelated weights.
func weight(member string, shard int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(member))
	var b [9]byte
	binary.BigEndian.PutUint64(b[1:], uint64(shard))
	h.Write(b[:])
	z := h.Sum64()
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Owner is the rendezvous (highest random weight) owner of a shard among
// members: the member of the largest weight, ties broken by the smaller
// id. It is "" when there are no members. Every worker that sees the same
// members computes the same owner without talking to the others, and
// when a member joins or leaves only the shards it wins or held move
// (Thaler and Ravishankar, "A name-based mapping scheme for rendezvous",
// 1996).
func Owner(shard int, members []string) string {
	best, bestW := "", uint64(0)
	for _, m := range members {
		w := weight(m, shard)
		if best == "" || w > bestW || (w == bestW && m < best) {
			best, bestW = m, w
		}
	}
	return best
}

// Assign returns, for every member, the shards it owns by Owner.
func Assign(members []string) map[string][]int {
	out := make(map[string][]int, len(members))
	for s := range Shards {
		if o := Owner(s, members); o != "" {
			out[o] = append(out[o], s)
		}
	}
	return out
}
