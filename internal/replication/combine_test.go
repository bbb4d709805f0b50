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
	var c combiner
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
	waitFor := func(cond func() bool) {
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatal("condition not reached")
			}
			time.Sleep(time.Millisecond)
		}
	}
	// Two requests go out at once and block.
	call("fail", 1)
	call("first", 2)
	waitFor(func() bool { mu.Lock(); defer mu.Unlock(); return len(requests) == 2 })
	// Three more batches wait behind them.
	for i, n := range []int{3, 1, 2} {
		call(fmt.Sprintf("w%d", i), n)
	}
	waitFor(func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.waiting) == 3 })
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
