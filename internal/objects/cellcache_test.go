package objects

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/meta"
)

// unsureStore is a metadata store whose commits sometimes fail: before
// applying the batch, or after (the outcome a timeout leaves unknown).
type unsureStore struct {
	meta.Store
	on  atomic.Bool // failing commits
	mu  sync.Mutex
	rng *rand.Rand
}

func (s *unsureStore) NewBatch() meta.Batch { return &unsureBatch{Batch: s.Store.NewBatch(), s: s} }

func (s *unsureStore) roll() int {
	if !s.on.Load() {
		return -1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.IntN(10)
}

type unsureBatch struct {
	meta.Batch
	s *unsureStore
}

var errUnsure = errors.New("commit outcome unknown")

func (b *unsureBatch) Commit(sync bool) error {
	switch b.s.roll() {
	case 0:
		return errUnsure // not applied
	case 1:
		if err := b.Batch.Commit(sync); err != nil {
			return err
		}
		return errUnsure // applied, but the caller cannot know
	}
	return b.Batch.Commit(sync)
}

// TestCellCacheKeepsCountersExact: concurrent writers overwrite, version,
// mark and remove keys, and empty and remove a bucket, on a store whose
// commits fail now and then, before or after applying; the stats cells
// the layer keeps (read from its cache on each write) equal the ones
// recomputed from the versions, with the cache warm and after a reopen.
func TestCellCacheKeepsCountersExact(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	bs, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := &unsureStore{Store: meta.NewMem(), rng: rand.New(rand.NewPCG(seed, 1))}
	l, err := New(m, bs, Config{SiteID: "site-a", InlineLimit: 8})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m.on.Store(true)
	for _, b := range []string{"plain", "versioned", "gone"} {
		for l.CreateBucket(ctx, b) != nil {
		}
	}
	for l.SetVersioning(ctx, "versioned", VersioningEnabled) != nil {
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)+2))
			for range 300 {
				bucket := []string{"plain", "versioned", "gone"}[rng.IntN(3)]
				key := fmt.Sprint("k", rng.IntN(12))
				switch rng.IntN(4) {
				case 0, 1:
					body := strings.Repeat("x", rng.IntN(20)) // inline or a blob
					l.PutObject(ctx, bucket, key, strings.NewReader(body), PutOptions{Size: int64(len(body))})
				case 2:
					l.DeleteObject(ctx, bucket, key, "")
				case 3:
					if vs, err := l.listKeyVersions(bucket, key); err == nil && len(vs) > 0 {
						l.DeleteObject(ctx, bucket, key, vs[rng.IntN(len(vs))])
					}
				}
			}
		})
	}
	wg.Wait()
	// Empty one bucket and remove it, then make it again and write to it.
	for {
		vs, err := l.allVersions("gone")
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) == 0 {
			break
		}
		for _, kv := range vs {
			l.DeleteObject(ctx, "gone", kv[0], kv[1])
		}
	}
	for {
		err := l.DeleteBucket(ctx, "gone")
		if err == nil || errors.Is(err, ErrBucketNotFound) {
			break
		}
	}
	for l.CreateBucket(ctx, "gone") != nil {
	}
	for i := range 5 {
		l.PutObject(ctx, "gone", fmt.Sprint("k", i), strings.NewReader("again"), PutOptions{Size: 5})
	}
	m.on.Store(false)
	checkCells(t, "with the cache warm", l)
	l2, err := New(m.Store, bs, Config{SiteID: "site-a", InlineLimit: 8})
	if err != nil {
		t.Fatal(err)
	}
	checkCells(t, "after a reopen", l2)
}

// listKeyVersions lists one key's version IDs.
func (l *Layer) listKeyVersions(bucket, key string) ([]string, error) {
	vs, _, err := l.keyState(bucket, key)
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.VersionID
	}
	return ids, err
}

// allVersions lists a bucket's key and version ID pairs.
func (l *Layer) allVersions(bucket string) ([][2]string, error) {
	var out [][2]string
	p := versionBucketPrefix(bucket)
	err := meta.Scan(l.meta, p, meta.PrefixEnd(p), func(k, raw []byte) (bool, error) {
		_, key, ok := splitAnyVersionKey(k)
		if !ok {
			return true, nil
		}
		v := &Version{}
		if err := decode(raw, v); err != nil {
			return false, err
		}
		out = append(out, [2]string{key, v.VersionID})
		return true, nil
	})
	return out, err
}

// checkCells compares the stored stats cells with the ones recomputed
// from the versions and latest records.
func checkCells(t *testing.T, when string, l *Layer) {
	t.Helper()
	want, _, err := recount(l.meta)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]cell{}
	if err := meta.Scan(l.meta, []byte(pfxCell), meta.PrefixEnd([]byte(pfxCell)), func(k, v []byte) (bool, error) {
		c, err := decodeCell(v)
		got[string(k)] = c
		return true, err
	}); err != nil {
		t.Fatal(err)
	}
	for k, c := range want {
		if c == (cell{}) {
			delete(want, k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d stored cells, %d recomputed", when, len(got), len(want))
	}
	for k, c := range want {
		if got[k] != c {
			t.Errorf("%s: cell %q stored %+v, recomputed %+v", when, k, got[k], c)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}
