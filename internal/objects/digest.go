package objects

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"sync"

	"github.com/twinlake/twinlake/internal/meta"
)

// DigestSlots is how many slots a bucket's version digest has. A key's
// versions all fall in one slot, chosen by a hash of the key.
const DigestSlots = 256

// Digest summarises every version of a bucket: per slot, the XOR of a hash
// of each version's (key, version ID, times, origin, delete marker). Two
// sites holding the same versions have equal digests; comparing digests
// finds the slots that differ without reading any version.
type Digest [DigestSlots]uint64

// digests keeps every bucket's Digest current on each version change. It is
// built once by a scan when the layer opens, like the usage counters.
type digests struct {
	mu sync.Mutex
	m  map[string]*Digest
}

// SlotOf returns the digest slot of an object key.
func SlotOf(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % DigestSlots)
}

func versionHash(key string, v *Version) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(v.VersionID))
	h.Write([]byte{0})
	h.Write([]byte(v.Origin))
	var b [17]byte
	binary.BigEndian.PutUint64(b[0:], uint64(v.ModTime))
	binary.BigEndian.PutUint64(b[8:], uint64(v.MetaTime))
	if v.DeleteMarker {
		b[16] = 1
	}
	h.Write(b[:])
	return h.Sum64()
}

func (d *digests) toggle(bucket, key string, v *Version) {
	h := versionHash(key, v)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[string]*Digest{}
	}
	dg := d.m[bucket]
	if dg == nil {
		dg = &Digest{}
		d.m[bucket] = dg
	}
	dg[SlotOf(key)] ^= h
}

func (d *digests) add(bucket, key string, v *Version)    { d.toggle(bucket, key, v) }
func (d *digests) remove(bucket, key string, v *Version) { d.toggle(bucket, key, v) }

func (d *digests) drop(bucket string) {
	d.mu.Lock()
	delete(d.m, bucket)
	d.mu.Unlock()
}

// load builds every bucket's digest from the version records, and hands
// each record to also (which may be nil): the startup pass that needs every
// version reads them once.
func (d *digests) load(m meta.Store, also func(v *Version)) error {
	lo := []byte(pfxVersion)
	return meta.Scan(m, lo, meta.PrefixEnd(lo), func(k, raw []byte) (bool, error) {
		rest := k[len(pfxVersion):]
		i := 0
		for i < len(rest) && rest[i] != 0 {
			i++
		}
		bucket := string(rest[:i])
		key, _, ok := splitVersionKey(bucket, k)
		if !ok {
			return true, nil
		}
		v := &Version{}
		if err := decode(raw, v); err != nil {
			return false, err
		}
		d.add(bucket, key, v)
		if also != nil {
			also(v)
		}
		return true, nil
	})
}

// BucketDigest returns the bucket's current version digest.
func (l *Layer) BucketDigest(ctx context.Context, bucket string) (Digest, error) {
	if _, err := l.Bucket(ctx, bucket); err != nil {
		return Digest{}, err
	}
	l.digests.mu.Lock()
	defer l.digests.mu.Unlock()
	if dg := l.digests.m[bucket]; dg != nil {
		return *dg, nil
	}
	return Digest{}, nil
}

// SlotVersions returns every version of bucket whose key falls in one of
// slots, in one pass over the bucket's versions.
func (l *Layer) SlotVersions(ctx context.Context, bucket string, slots []int) ([]VersionRef, error) {
	want := make(map[int]bool, len(slots))
	for _, s := range slots {
		want[s] = true
	}
	var out []VersionRef
	err := l.WalkVersions(ctx, bucket, "", "", func(r VersionRef) bool {
		if want[SlotOf(r.Key)] {
			out = append(out, r)
		}
		return true
	})
	return out, err
}
