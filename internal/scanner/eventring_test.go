package scanner

import (
	"testing"

	"github.com/twinlake/twinlake/internal/trace"
)

// The ring keeps the newest recentEventCount events, newest first.
func TestEventRing(t *testing.T) {
	var r eventRing
	if got := r.newestFirst(); len(got) != 0 {
		t.Fatalf("empty ring = %v", got)
	}
	for i := range recentEventCount + 7 {
		r.add(trace.Event{StatusCode: i})
	}
	got := r.newestFirst()
	if len(got) != recentEventCount || got[0].StatusCode != recentEventCount+6 || got[len(got)-1].StatusCode != 7 {
		t.Fatalf("ring holds %d events, %d..%d", len(got), got[0].StatusCode, got[len(got)-1].StatusCode)
	}
	for i := 1; i < len(got); i++ {
		if got[i].StatusCode != got[i-1].StatusCode-1 {
			t.Fatalf("not newest first at %d: %d after %d", i, got[i].StatusCode, got[i-1].StatusCode)
		}
	}
}
