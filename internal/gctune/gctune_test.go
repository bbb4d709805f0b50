package gctune

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live, headroom uint64
		want           int
	}{
		{live: 8 * mib, headroom: 32 * mib, want: 400},   // grows by headroom
		{live: 16 * mib, headroom: 32 * mib, want: 200},  // grows by headroom
		{live: 32 * mib, headroom: 32 * mib, want: 100},  // grows by live, as GOGC=100
		{live: 500 * mib, headroom: 32 * mib, want: 100}, // large heaps are untouched
		{live: 1 * mib, headroom: 32 * mib, want: 800},   // the runtime's 4 MiB floor, scaled, stays at headroom
		{live: 0, headroom: 32 * mib, want: 800},
		{live: 1 * mib, headroom: 4 * mib, want: 100}, // headroom no more than the floor: nothing to tune
		{live: 1 * mib, headroom: 0, want: 100},
	} {
		if got := Percent(tc.live, tc.headroom); got != tc.want {
			t.Errorf("Percent(%d MiB, %d MiB) = %d, want %d", tc.live/mib, tc.headroom/mib, got, tc.want)
		}
	}
}

// The tuner sets the percent after each collection and gives back the
// percent it found when stopped.
func TestTunerFollowsCollections(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	tu := Start(256 << 20)
	if got := tu.tuned.Load(); got != 0 {
		t.Fatalf("tuned %d times before any collection", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for tu.tuned.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("tuned %d times after the collections, want 2", tu.tuned.Load())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	tu.Stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("percent after Stop = %d, want the 100 it had before Start", got)
	}
	n := tu.tuned.Load()
	runtime.GC()
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if got := tu.tuned.Load(); got != n {
		t.Errorf("tuned %d times after Stop", got-n)
	}
}

// With GOGC set the operator's percent stands: Start changes nothing.
func TestStartLeavesGOGCAlone(t *testing.T) {
	t.Setenv("GOGC", "150")
	before := debug.SetGCPercent(150)
	defer debug.SetGCPercent(before)
	tu := Start(256 << 20)
	if tu.Active() {
		t.Error("a tuner is active with GOGC set")
	}
	tu.Stop()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Errorf("percent = %d, want GOGC's 150", got)
	}
}
