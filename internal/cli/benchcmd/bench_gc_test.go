package benchcmd

import (
	"runtime/debug"
	"testing"
)

// A process running several bench commands (tests run them in process)
// holds one tuner at a time, and the percent it found comes back after.
func TestBenchTunesGCOnce(t *testing.T) {
	t.Setenv("GOGC", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	tuneGC()
	first := tuner
	tuneGC() // a command whose post-run hook did not run (it failed)
	if first == nil || tuner != first {
		t.Fatalf("tuners %p then %p, want one", first, tuner)
	}
	untuneGC()
	if tuner != nil {
		t.Fatal("tuner kept after the post-run hook")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("percent after the bench = %d, want the 100 it had before", got)
	}

	t.Setenv("GOGC", "150")
	tuneGC()
	defer untuneGC()
	if tuner.Active() {
		t.Error("tuned with GOGC set")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("percent with GOGC set = %d, want the 100 it had", got)
	}
}
