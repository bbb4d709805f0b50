package replication

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/objects"
)

// TestCombinerGroupsWaitingBatches: with the requests in flight at their
// limit, the batches handed in meanwhile go together in the next request;
// every caller gets the results of its own items, in its order, and a
// failed request fails each batch it carried.
func TestCombinerGroupsWaitingBatches(t *testing.T) {
	clock := newFakeClock()
	c := combiner{now: clock.now}
	release := make(chan struct{})
	var mu sync.Mutex
	var requests [][]string
	inFlight, maxSeen := 0, 0
	send := func(ctx context.Context, items []VersionItem) ([]ItemResult, error) {
		mu.Lock()
		inFlight++
		maxSeen = max(maxSeen, inFlight)
		var keys []string
		for _, it := range items {
			keys = append(keys, it.Key)
		}
		requests = append(requests, keys)
		mu.Unlock()
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		if items[0].Key == "fail/0" {
			return nil, errors.New("injected")
		}
		out := make([]ItemResult, len(items))
		for i, it := range items {
			out[i] = ItemResult{Outcome: "applied " + it.Key}
		}
		return out, nil
	}
	batch := func(name string, n int) []VersionItem {
		items := make([]VersionItem, n)
		for i := range items {
			items[i] = VersionItem{Bucket: "b", Key: fmt.Sprintf("%s/%d", name, i), Version: &objects.Version{}, Data: []byte("x")}
		}
		return items
	}
	type answer struct {
		name    string
		results []ItemResult
		err     error
	}
	answers := make(chan answer, 16)
	call := func(name string, n int) {
		go func() {
			res, err := c.send(context.Background(), batch(name, n), send)
			answers <- answer{name, res, err}
		}()
	}
	// Two requests go out at once and block: the second once the first
	// has been out secondAfter.
	call("fail", 1)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(requests) == 1 })
	clock.advance(secondAfter)
	call("first", 2)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(requests) == 2 })
	// Three more batches wait behind them.
	for i, n := range []int{3, 1, 2} {
		call(fmt.Sprintf("w%d", i), n)
	}
	waitFor(t, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.waiting) == 3 })
	close(release)
	got := map[string]answer{}
	for range 5 {
		a := <-answers
		got[a.name] = a
	}
	if got["fail"].err == nil {
		t.Error("the failed request's batch has no error")
	}
	for name, n := range map[string]int{"first": 2, "w0": 3, "w1": 1, "w2": 2} {
		a := got[name]
		if a.err != nil || len(a.results) != n {
			t.Errorf("%s: %d results, err %v; want %d", name, len(a.results), a.err, n)
			continue
		}
		for i, r := range a.results {
			if want := fmt.Sprintf("applied %s/%d", name, i); r.Outcome != want {
				t.Errorf("%s result %d: %q, want %q", name, i, r.Outcome, want)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != 3 || len(requests[2]) != 6 {
		t.Errorf("requests %v: want the three waiting batches (6 items) in the third", requests)
	}
	if maxSeen > maxCombinedInFlight {
		t.Errorf("%d requests in flight at once, limit %d", maxSeen, maxCombinedInFlight)
	}
}

// fakeClock is a clock that moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_800_000_000, 0)} }

func (f *fakeClock) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

// TestCombinerMayStart: a request goes at once when none is out; a second
// joins it only once the first has been out secondAfter; never more than
// maxCombinedInFlight.
func TestCombinerMayStart(t *testing.T) {
	for _, tc := range []struct {
		inFlight int
		age      time.Duration
		want     bool
	}{
		{0, 0, true},
		{1, 0, false},
		{1, secondAfter - time.Microsecond, false},
		{1, secondAfter, true},
		{1, time.Second, true},
		{maxCombinedInFlight, time.Hour, false},
	} {
		if got := mayStart(tc.inFlight, tc.age); got != tc.want {
			t.Errorf("mayStart(%d, %v) = %v, want %v", tc.inFlight, tc.age, got, tc.want)
		}
	}
}

// TestCombinerOneRequestOnAShortLink: batches handed in while a young
// request is out wait for it and then go together in one request, not
// in a second one beside it.
func TestCombinerOneRequestOnAShortLink(t *testing.T) {
	clock := newFakeClock()
	c := combiner{now: clock.now}
	release := make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	inFlight, maxSeen := 0, 0
	send := func(ctx context.Context, items []VersionItem) ([]ItemResult, error) {
		mu.Lock()
		inFlight++
		maxSeen = max(maxSeen, inFlight)
		sizes = append(sizes, len(items))
		mu.Unlock()
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		return make([]ItemResult, len(items)), nil
	}
	var wg sync.WaitGroup
	call := func(n int) {
		items := make([]VersionItem, n)
		for i := range items {
			items[i] = VersionItem{Bucket: "b", Key: fmt.Sprint(i), Version: &objects.Version{}}
		}
		wg.Go(func() {
			if res, err := c.send(context.Background(), items, send); err != nil || len(res) != n {
				t.Errorf("%d results, err %v; want %d", len(res), err, n)
			}
		})
	}
	call(1)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(sizes) == 1 })
	clock.advance(secondAfter - time.Millisecond)
	call(2)
	call(3)
	waitFor(t, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.waiting) == 2 })
	close(release)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if maxSeen != 1 || len(sizes) != 2 || sizes[1] != 5 {
		t.Errorf("requests of %v items, %d out at once: want [1 5], one at a time", sizes, maxSeen)
	}
}

// TestCombinerLeaderLeavesWithItsAnswer: the caller whose request went
// out gets its answer as soon as that request is answered, while the
// batches that queued behind it go in the next request sent by one of
// their own callers; before, it sent them itself and its worker's own
// queue waited the next request out too.
func TestCombinerLeaderLeavesWithItsAnswer(t *testing.T) {
	clock := newFakeClock()
	c := combiner{now: clock.now}
	var mu sync.Mutex
	var gates []chan struct{}
	send := func(ctx context.Context, items []VersionItem) ([]ItemResult, error) {
		g := make(chan struct{})
		mu.Lock()
		gates = append(gates, g)
		mu.Unlock()
		<-g
		return make([]ItemResult, len(items)), nil
	}
	requests := func() int { mu.Lock(); defer mu.Unlock(); return len(gates) }
	open := func(i int) { mu.Lock(); g := gates[i]; mu.Unlock(); close(g) }
	call := func(n int) chan error {
		done := make(chan error, 1)
		go func() {
			res, err := c.send(context.Background(), make([]VersionItem, n), send)
			if err == nil && len(res) != n {
				err = fmt.Errorf("%d results, want %d", len(res), n)
			}
			done <- err
		}()
		return done
	}
	first := call(1)
	waitFor(t, func() bool { return requests() == 1 })
	second, third := call(2), call(3)
	waitFor(t, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.waiting) == 2 })
	open(0)
	select {
	case err := <-first:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first caller is still held after its request was answered")
	}
	waitFor(t, func() bool { return requests() == 2 })
	open(1)
	for _, ch := range []chan error{second, third} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	if n := requests(); n != 2 {
		t.Errorf("%d requests, want 2: the waiting batches together", n)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, _ := c.inFlightLocked(clock.now()); n != 0 || len(c.waiting) != 0 {
		t.Errorf("%d slots busy, %d batches waiting after every answer", n, len(c.waiting))
	}
}

// waitFor waits until cond holds, failing t after 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		if !cond() {
			return errors.New("condition not reached")
		}
		return nil
	})
}
