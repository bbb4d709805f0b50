package replication

import (
	"testing"
	"time"
)

// The ring keeps the newest hour of samples per link, oldest first, and
// since cuts at its argument.
func TestLinkHistoryRing(t *testing.T) {
	var h linkHistory
	t0 := time.Unix(1_700_000_000, 0).UTC()
	for i := range historyLen + 5 {
		h.add("site2", LinkSample{Time: t0.Add(time.Duration(i) * historyStep), Pending: int64(i)})
	}
	h.add("site3", LinkSample{Time: t0, Pending: 1})
	all := h.since(time.Time{})
	r := all["site2"]
	if len(r) != historyLen || r[0].Pending != 5 || r[len(r)-1].Pending != int64(historyLen+4) {
		t.Fatalf("ring holds %d samples, %d..%d", len(r), r[0].Pending, r[len(r)-1].Pending)
	}
	if len(all["site3"]) != 1 {
		t.Errorf("site3 = %v", all["site3"])
	}
	cut := t0.Add(time.Duration(historyLen) * historyStep)
	if got := h.since(cut)["site2"]; len(got) != 5 || got[0].Time.Before(cut) {
		t.Errorf("since(cut) = %d samples from %v", len(got), got[0].Time)
	}
	if got := h.since(cut)["site3"]; len(got) != 0 {
		t.Errorf("site3 since cut = %v", got)
	}
	// A copy: changing it leaves the ring alone.
	all["site2"][0].Pending = -1
	if h.since(time.Time{})["site2"][0].Pending == -1 {
		t.Error("since returned the ring itself")
	}
}
