package objects

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/meta"
)

// countingStore is a meta.Store that counts the records it hands out:
// every Get that finds a value and every iterator step that lands on one.
type countingStore struct {
	meta.Store
	reads atomic.Int64
}

var _ meta.Store = (*countingStore)(nil)

func (c *countingStore) Get(k []byte) ([]byte, error) {
	v, err := c.Store.Get(k)
	if err == nil {
		c.reads.Add(1)
	}
	return v, err
}

func (c *countingStore) Iter(lo, hi []byte) (meta.Iterator, error) {
	it, err := c.Store.Iter(lo, hi)
	if err != nil {
		return nil, err
	}
	return &countingIter{Iterator: it, n: &c.reads}, nil
}

type countingIter struct {
	meta.Iterator
	n *atomic.Int64
}

func (i *countingIter) count(ok bool) bool {
	if ok {
		i.n.Add(1)
	}
	return ok
}
func (i *countingIter) First() bool          { return i.count(i.Iterator.First()) }
func (i *countingIter) SeekGE(k []byte) bool { return i.count(i.Iterator.SeekGE(k)) }
func (i *countingIter) Next() bool           { return i.count(i.Iterator.Next()) }

// writeOldVersions writes a bucket of n keys, one version each, with
// records as every twinlake format writes them (bucket, version, latest);
// what the current format adds beside them the layer maintains itself.
func writeOldVersions(t testing.TB, m meta.Store, bucket string, n int) {
	t.Helper()
	b := Bucket{Name: bucket, ModTime: 1}
	batch := m.NewBatch()
	batch.Set(bucketKey(bucket), encode(&b))
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("obj/%07d", i)
		v := &Version{VersionID: NullVersionID, ModTime: int64(i + 1), Size: int64(i % 100), ETag: "e", Origin: "site-a",
			Segments: []Segment{{Size: int64(i % 100), Inline: make([]byte, i%100)}}}
		batch.Set(versionKey(bucket, key, v.VersionID), encode(v))
		batch.Set(latestKey(bucket, key), encode(summarize(v)))
		if batch.Len() >= 20000 {
			if err := batch.Commit(false); err != nil {
				t.Fatal(err)
			}
			batch = m.NewBatch()
		}
	}
	if err := batch.Commit(true); err != nil {
		t.Fatal(err)
	}
}

// openReads opens a layer over a Pebble store holding n versions twice
// (the first open may upgrade the store once) and returns how many records
// the second open read.
func openReads(t *testing.T, n int) int64 {
	dir := t.TempDir()
	m, err := meta.OpenPebble(filepath.Join(dir, "meta"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	blobs, err := blob.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeOldVersions(t, m, "bkt", n)
	if _, err := New(m, blobs, Config{SiteID: "site-a"}); err != nil {
		t.Fatal(err)
	}
	cs := &countingStore{Store: m}
	l, err := New(cs, blobs, Config{SiteID: "site-a"})
	if err != nil {
		t.Fatal(err)
	}
	reads := cs.reads.Load()
	if u := l.Usage(); u.Objects != int64(n) {
		t.Fatalf("%d versions: usage %+v", n, u)
	}
	return reads
}

// TestOpenReadsIndependentOfObjectCount: opening the layer reads the same
// number of metadata records over 1,000 and 100,000 versions.
func TestOpenReadsIndependentOfObjectCount(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100,000 versions")
	}
	small, large := openReads(t, 1000), openReads(t, 100000)
	t.Logf("records read by an open: %d at 1,000 versions, %d at 100,000", small, large)
	if small != large {
		t.Fatalf("an open read %d records over 1,000 versions and %d over 100,000", small, large)
	}
	if large > 100 {
		t.Fatalf("an open read %d records; want a small constant", large)
	}
}
