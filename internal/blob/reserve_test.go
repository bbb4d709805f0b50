package blob

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// TestReserve: a write is taken while the free space left after it is at
// least the reserve; writes taken count against the last look until the
// next, a second later; a size not known yet counts as none.
func TestReserve(t *testing.T) {
	const mib = 1 << 20
	var (
		free  int64 = 1000 * mib
		looks int
		clock = time.Unix(1000, 0)
	)
	g := &Reserve{dir: "d", keep: 200 * mib, now: func() time.Time { return clock },
		free: func(string) (int64, error) { looks++; return free, nil }}
	steps := []struct {
		advance time.Duration
		free    int64 // set before the step, when not 0
		size    int64
		full    bool
	}{
		{size: 500 * mib},                           // 1000 free: 500 left
		{size: 300 * mib},                           // 200 left: exactly the reserve
		{size: 1, full: true},                       // counted: 200 left, none to spare
		{size: -1},                                  // not known: counted as none
		{advance: time.Second, size: 1},             // looks again: still 1000 free (nothing was written)
		{free: 150 * mib, size: 0},                  // the same look: 1000-1 left
		{advance: time.Second, size: 0, full: true}, // 150 free: below the reserve
		{advance: time.Second, free: 201 * mib, size: mib},
		{size: 1, full: true},
		{advance: -time.Hour, free: 900 * mib, size: 600 * mib}, // a clock set back looks again
	}
	for i, s := range steps {
		clock = clock.Add(s.advance)
		if s.free != 0 {
			free = s.free
		}
		err := g.Take(s.size)
		if got := err != nil; got != s.full {
			t.Fatalf("step %d (%d bytes, %d free): err %v, want full %v", i, s.size, free, err, s.full)
		}
		if err != nil && !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("step %d: %v is not ENOSPC", i, err)
		}
	}
	if looks != 5 {
		t.Fatalf("looked at the free space %d times, want 5 (once a second, and when the clock went back)", looks)
	}
	g.free = func(string) (int64, error) { return 0, syscall.EIO }
	clock = clock.Add(time.Second)
	if err := g.Take(1); !errors.Is(err, syscall.EIO) {
		t.Fatalf("a failed look: %v", err)
	}
}
