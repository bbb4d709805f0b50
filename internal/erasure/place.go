package erasure

import (
	"cmp"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// Place orders members for the object bucket/key: shard i goes to the
// i-th member returned. The order is rendezvous (highest random weight)
// hashing of bucket, key and member name, so every node computes the same
// placement from the same member set, the shards of different objects are
// spread evenly, and a member added or removed changes the rank of no two
// other members relative to each other.
//
// members is not modified; the result is a new slice.
func Place(bucket, key string, members []string) []string {
	type ranked struct {
		name  string
		score uint64
	}
	rs := make([]ranked, len(members))
	var d xxhash.Digest
	for i, m := range members {
		d.Reset()
		_, _ = d.WriteString(bucket)
		_, _ = d.Write([]byte{0})
		_, _ = d.WriteString(key)
		_, _ = d.Write([]byte{0})
		_, _ = d.WriteString(m)
		rs[i] = ranked{m, d.Sum64()}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.name
	}
	return out
}
