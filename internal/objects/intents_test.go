package objects

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/meta"
)

// gatedStore is a metadata store that counts synced commits and holds the
// first one until gate closes.
type gatedStore struct {
	meta.Store
	gate    chan struct{}
	commits atomic.Int64
	fail    atomic.Bool
}

func (s *gatedStore) NewBatch() meta.Batch { return &gatedBatch{Batch: s.Store.NewBatch(), s: s} }

type gatedBatch struct {
	meta.Batch
	s *gatedStore
}

var errGated = errors.New("commit refused")

func (b *gatedBatch) Commit(sync bool) error {
	if b.s.commits.Add(1) == 1 {
		<-b.s.gate
	}
	if b.s.fail.Load() {
		return errGated
	}
	return b.Batch.Commit(sync)
}

// TestIntentsCommitTogether: the intents of writes that arrive while one
// commit is in flight share the next commit; each write returns once its
// own intent is durable, and a failed commit fails every write in it.
func TestIntentsCommitTogether(t *testing.T) {
	bs, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	open := make(chan struct{})
	close(open)
	m := &gatedStore{Store: meta.NewMem(), gate: open} // New's own commits pass
	l, err := New(m, bs, Config{SiteID: "site-a"})
	if err != nil {
		t.Fatal(err)
	}
	m.commits.Store(0)
	m.gate = make(chan struct{})
	const writers = 8
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() { errs[i] = l.intents.write(l, fmt.Sprintf("%032x", i)) })
		if i == 0 {
			waitFor(t, func() bool { return m.commits.Load() == 1 }) // the first leads, alone
		}
	}
	waitFor(t, func() bool {
		l.intents.mu.Lock()
		defer l.intents.mu.Unlock()
		return len(l.intents.queue) == writers-1
	})
	close(m.gate)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if _, err := m.Get(intentKey(fmt.Sprintf("%032x", i))); err != nil {
			t.Fatalf("intent %d: %v", i, err)
		}
	}
	if got := m.commits.Load(); got != 2 {
		t.Fatalf("%d writes made %d commits, want 2: the first, then the 7 that waited for it", writers, got)
	}

	// A commit that fails fails every write it carried.
	m.fail.Store(true)
	m.commits.Store(0)
	m.gate = make(chan struct{})
	for i := range writers {
		wg.Go(func() { errs[i] = l.intents.write(l, fmt.Sprintf("%032x", 100+i)) })
	}
	waitFor(t, func() bool {
		l.intents.mu.Lock()
		defer l.intents.mu.Unlock()
		return m.commits.Load() == 1 && len(l.intents.queue) == writers-1
	})
	close(m.gate)
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, errGated) {
			t.Fatalf("write %d on a failing store: %v", i, err)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}
