package hlc

import (
	"testing"
	"time"
)

func TestClockMonotonicUnderSkew(t *testing.T) {
	wall := time.Unix(1000, 0)
	c := New(func() time.Time { return wall })
	a := c.Now()
	b := c.Now()
	if b <= a {
		t.Fatalf("Now not increasing: %d then %d", a, b)
	}
	// A peer an hour ahead: our next write must still order after it.
	peer := wall.Add(time.Hour).UnixNano()
	c.Observe(peer)
	if n := c.Now(); n <= peer {
		t.Fatalf("Now %d not after observed %d", n, peer)
	}
	// Our wall clock stepping backwards changes nothing.
	wall = wall.Add(-time.Minute)
	if n := c.Now(); n <= peer {
		t.Fatalf("Now went backwards: %d", n)
	}
}
