package replication

import (
	"testing"
	"time"
)

// TestIAMGate: open, the gate admits every record; closed by a refusal,
// it admits one record per interval (and asks for one journal re-read per
// interval), one at once after the link came back up, and every record
// again once reopened.
func TestIAMGate(t *testing.T) {
	var g iamGate
	t0 := time.Unix(1000, 0)
	const every = time.Second
	for i := range 3 {
		if !g.admit(t0, every) || g.probeDue(t0, every) {
			t.Fatalf("open gate, record %d: not admitted or a probe asked for", i)
		}
	}
	if !g.refuse(t0, "NoSuchCall") || g.refuse(t0, "NoSuchCall") {
		t.Fatal("refuse reports the first refusal only")
	}
	if refused, since, reason := g.state(); !refused || !since.Equal(t0) || reason != "NoSuchCall" {
		t.Fatalf("state %v %v %q", refused, since, reason)
	}
	if g.admit(t0.Add(every/2), every) || g.probeDue(t0.Add(every/2), every) {
		t.Fatal("a record admitted within the interval")
	}
	t1 := t0.Add(every)
	if !g.probeDue(t1, every) || g.probeDue(t1, every) {
		t.Fatal("one journal re-read per interval")
	}
	if !g.admit(t1, every) || g.admit(t1, every) {
		t.Fatal("one record per interval")
	}
	g.refuse(t1, "NoSuchCall") // the probe was refused again
	if _, since, _ := g.state(); !since.Equal(t0) {
		t.Fatalf("since moved to %v", since)
	}
	g.probeNow() // the link came back up
	if !g.probeDue(t1, every) || !g.admit(t1, every) || g.admit(t1, every) {
		t.Fatal("after link-up: one record at once")
	}
	if !g.reopen() || g.reopen() {
		t.Fatal("reopen reports that the gate was closed, once")
	}
	if refused, since, _ := g.state(); refused || !since.IsZero() || !g.admit(t1, every) || !g.admit(t1, every) {
		t.Fatal("reopened gate does not admit every record")
	}
}
