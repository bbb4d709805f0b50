package objects

import (
	"context"
	"encoding/binary"
	"hash/fnv"

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

// SlotOf returns the digest slot of an object key.
func SlotOf(key string) int { return int(keyHash(key) % DigestSlots) }

func keyHash(key string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(key))
	return h.Sum32()
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

// BucketDigest returns the bucket's current version digest. It folds the
// bucket's stored stats cells (at most CellsPerBucket records, whatever the
// bucket holds) from one consistent snapshot.
func (l *Layer) BucketDigest(ctx context.Context, bucket string) (Digest, error) {
	var dg Digest
	if _, err := l.Bucket(ctx, bucket); err != nil {
		return dg, err
	}
	p := cellPrefix(bucket)
	err := meta.Scan(l.meta, p, meta.PrefixEnd(p), func(k, raw []byte) (bool, error) {
		_, n, ok := splitCellKey(k)
		c, err := decodeCell(raw)
		if !ok || err != nil {
			return false, errBadCell(k)
		}
		dg[n%DigestSlots] ^= c.digest
		return true, nil
	})
	return dg, err
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
