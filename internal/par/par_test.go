package par

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// Each calls every index once, never more than limit at once, and with no
// limit all at once.
func TestEach(t *testing.T) {
	for _, limit := range []int{1, 3, 0} {
		const n = 40
		var running, peak atomic.Int64
		seen := make([]atomic.Int64, n)
		release := make(chan struct{})
		var full sync.Once
		want := int64(limit)
		if limit < 1 {
			want = n
		}
		Each(n, limit, func(i int) {
			seen[i].Add(1)
			r := running.Add(1)
			defer running.Add(-1)
			for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
			}
			if r == want {
				full.Do(func() { close(release) })
			}
			<-release
		})
		if peak.Load() != want {
			t.Errorf("limit %d: at most %d at once, want %d", limit, peak.Load(), want)
		}
		for i := range seen {
			if seen[i].Load() != 1 {
				t.Fatalf("limit %d: index %d called %d times", limit, i, seen[i].Load())
			}
		}
	}
}

// A panic in a call is raised in Each's caller once every call has ended.
func TestEachRaisesAPanicInTheCaller(t *testing.T) {
	var ended atomic.Int64
	defer func() {
		if p := recover(); p != "boom" {
			t.Fatalf("recovered %v, want the call's panic", p)
		}
		if ended.Load() != 9 {
			t.Fatalf("%d other calls ended before the panic was raised, want 9", ended.Load())
		}
	}()
	Each(10, 4, func(i int) {
		if i == 5 {
			panic("boom")
		}
		ended.Add(1)
	})
	t.Fatal("Each returned")
}

// EachErr returns the first error and starts nothing after it; it returns
// the context's end; and a panic reaches its caller.
func TestEachErr(t *testing.T) {
	boom := errors.New("boom")
	var calls atomic.Int64
	err := EachErr(t.Context(), 10_000, 4, func(_ context.Context, i int) error {
		calls.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || calls.Load() == 10_000 {
		t.Fatalf("after a failure: %v, %d calls of 10000", err, calls.Load())
	}
	// One at a time, nothing starts after the failure.
	calls.Store(0)
	err = EachErr(t.Context(), 10, 1, func(_ context.Context, i int) error {
		calls.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || calls.Load() != 4 {
		t.Fatalf("one at a time, after a failure: %v, %d calls; want the 4 up to the failing one", err, calls.Load())
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := EachErr(ctx, 10, 2, func(context.Context, int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("with its context ended: %v", err)
	}
	if err := EachErr(t.Context(), 50, 0, func(context.Context, int) error { return nil }); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if p := recover(); p != "bad" {
				t.Fatalf("recovered %v", p)
			}
		}()
		EachErr(t.Context(), 3, 1, func(_ context.Context, i int) error { panic("bad") })
	}()
}
