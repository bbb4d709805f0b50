package app

import (
	"net"
	"testing"
	"time"
)

func TestGoneLeader(t *testing.T) {
	type probe struct {
		id      string
		refused bool
		at      time.Duration
	}
	r := func(id string, at time.Duration) probe { return probe{id, true, at} }
	ok := func(id string, at time.Duration) probe { return probe{id, false, at} }
	ms := time.Millisecond
	for _, tc := range []struct {
		name   string
		probes []probe
		want   []bool // what each probe reports
	}{
		{"answering leader", []probe{ok("a", 0), ok("a", 200*ms), ok("a", 2000*ms)}, []bool{false, false, false}},
		{"refused a second, three times", []probe{r("a", 0), r("a", 500*ms), r("a", 1000*ms), r("a", 1200*ms)},
			[]bool{false, false, true, true}},
		{"three refusals in less than a second", []probe{r("a", 0), r("a", 200*ms), r("a", 400*ms), r("a", 1000*ms)},
			[]bool{false, false, false, true}},
		{"two refusals over a second", []probe{r("a", 0), r("a", 1500*ms)}, []bool{false, false}},
		{"an answer starts the count again", []probe{r("a", 0), r("a", 500*ms), ok("a", 800*ms), r("a", 1000*ms), r("a", 1500*ms), r("a", 2000*ms)},
			[]bool{false, false, false, false, false, true}},
		{"a new leader starts the count again", []probe{r("a", 0), r("a", 500*ms), r("b", 1000*ms), r("b", 1500*ms), r("b", 2000*ms)},
			[]bool{false, false, false, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g goneLeader
			start := time.Unix(1700000000, 0)
			for i, p := range tc.probes {
				if got := g.observe(p.id, p.refused, start.Add(p.at)); got != tc.want[i] {
					t.Fatalf("probe %d (%+v) = %v, want %v", i, p, got, tc.want[i])
				}
			}
		})
	}
}

func TestRefuses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if refuses(addr) {
		t.Fatalf("refuses(%s) while it listens", addr)
	}
	ln.Close()
	if !refuses(addr) {
		t.Fatalf("refuses(%s) = false once nothing listens", addr)
	}
	if refuses("not an address") {
		t.Fatal("refuses of an address that does not parse: a failure to dial is not a refusal")
	}
}
