package erasure

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// Place orders members for the object bucket/key: shard i goes to the
// i-th member returned. It is PlaceHash of the object's KeyHash.
//
// members is not modified; the result is a new slice.
func Place(bucket, key string, members []string) []string {
	return PlaceHash(KeyHash(bucket, key), members)
}

// KeyHash is the 64-bit hash of bucket and key that an object's shards
// are placed by.
func KeyHash(bucket, key string) uint64 {
	var d xxhash.Digest
	_, _ = d.WriteString(bucket)
	_, _ = d.Write([]byte{0})
	_, _ = d.WriteString(key)
	return d.Sum64()
}

// PlaceHash orders members for the object whose KeyHash is h. The order
// is rendezvous (highest random weight) hashing of h and the member's
// name, so every node computes the same placement from the same member
// set, the shards of different objects are spread evenly, and a member
// added or removed changes the rank of no two other members relative to
// each other.
//
// members is not modified; the result is a new slice.
func PlaceHash(h uint64, members []string) []string {
	var seed [8]byte
	binary.BigEndian.PutUint64(seed[:], h)
	return rank(seed[:], members)
}

// PlaceName orders members by rendezvous hashing of name: how a drive set
// placed the shards of a blob before blobs were placed by their object's
// key, from the blob's ID alone.
func PlaceName(name string, members []string) []string {
	return rank([]byte("\x00"+name+"\x00"), members)
}

// rank orders members by the hash of seed and each member's name, highest
// first (ties by name).
func rank(seed []byte, members []string) []string {
	type ranked struct {
		name  string
		score uint64
	}
	rs := make([]ranked, len(members))
	var d xxhash.Digest
	for i, m := range members {
		d.Reset()
		_, _ = d.Write(seed)
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
