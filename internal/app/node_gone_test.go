package app

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestLeaderProbes(t *testing.T) {
	type pr struct {
		id     string
		result probeResult
		at     time.Duration // when it was sent
		took   time.Duration
	}
	ms := time.Millisecond
	r := func(id string, at time.Duration) pr { return pr{id, probeRefused, at, ms} }
	ok := func(id string, at time.Duration) pr { return pr{id, probeAnswered, at, ms} }
	s := func(id string, at time.Duration) pr { return pr{id, probeSilent, at, stallTimeout} }
	f := func(id string, at time.Duration) pr { return pr{id, probeFailed, at, ms} }
	u := func(id string, at time.Duration) pr { return pr{id, probeUnreachable, at, probeDialTimeout} }
	for _, tc := range []struct {
		name   string
		probes []pr
		want   []verdict // what each probe reports
	}{
		{"answering leader", []pr{ok("a", 0), ok("a", 200*ms), ok("a", 2000*ms)}, []verdict{leaderServes, leaderServes, leaderServes}},
		{"refused a second, three times", []pr{r("a", 0), r("a", 500*ms), r("a", 1000*ms), r("a", 1200*ms)},
			[]verdict{leaderServes, leaderServes, leaderGone, leaderGone}},
		{"three refusals in less than a second", []pr{r("a", 0), r("a", 200*ms), r("a", 400*ms), r("a", 1000*ms)},
			[]verdict{leaderServes, leaderServes, leaderServes, leaderGone}},
		{"two refusals over a second", []pr{r("a", 0), r("a", 1500*ms)}, []verdict{leaderServes, leaderServes}},
		{"an answer starts the count again", []pr{r("a", 0), r("a", 500*ms), ok("a", 800*ms), r("a", 1000*ms), r("a", 1500*ms), r("a", 2000*ms)},
			[]verdict{leaderServes, leaderServes, leaderServes, leaderServes, leaderServes, leaderGone}},
		{"a new leader starts the count again", []pr{r("a", 0), r("a", 500*ms), r("b", 1000*ms), r("b", 1500*ms), r("b", 2000*ms)},
			[]verdict{leaderServes, leaderServes, leaderServes, leaderServes, leaderGone}},
		// Silent probes take stallTimeout each; the third, sent 2.4 s
		// after the first, ends 3.4 s after it.
		{"silent three times over three seconds", []pr{s("a", 0), s("a", 1200*ms), s("a", 2400*ms), s("a", 3600*ms)},
			[]verdict{leaderServes, leaderServes, leaderStalled, leaderStalled}},
		{"silent, then answering", []pr{s("a", 0), s("a", 1200*ms), ok("a", 2400*ms), s("a", 2600*ms), s("a", 3800*ms)},
			[]verdict{leaderServes, leaderServes, leaderServes, leaderServes, leaderServes}},
		{"two silent probes over a long time", []pr{s("a", 0), s("a", 20000*ms)}, []verdict{leaderServes, leaderServes}},
		// A node paused itself sends a probe and sees it end long after:
		// one probe, not a leader that answers nothing.
		{"one probe that took long", []pr{{"a", probeSilent, 0, 20 * time.Second}, ok("a", 20200*ms)}, []verdict{leaderServes, leaderServes}},
		{"a connection that times out does not count as silent", []pr{s("a", 0), s("a", 1200*ms), u("a", 2400*ms), s("a", 2600*ms), s("a", 3800*ms), s("a", 5000*ms)},
			[]verdict{leaderServes, leaderServes, leaderServes, leaderServes, leaderServes, leaderStalled}},
		{"a failed probe starts the count again", []pr{s("a", 0), s("a", 1200*ms), f("a", 2400*ms), s("a", 2600*ms), s("a", 3800*ms), s("a", 5000*ms)},
			[]verdict{leaderServes, leaderServes, leaderServes, leaderServes, leaderServes, leaderStalled}},
		{"timed out for three seconds", []pr{u("a", 0), u("a", 350*ms), u("a", 700*ms), u("a", 2800*ms), u("a", 3000*ms)},
			[]verdict{leaderServes, leaderServes, leaderServes, leaderServes, leaderUnreachable}},
		{"timed out, then answering", []pr{u("a", 0), u("a", 1000*ms), u("a", 2000*ms), ok("a", 2900*ms), u("a", 3000*ms), u("a", 3500*ms)},
			[]verdict{leaderServes, leaderServes, leaderServes, leaderServes, leaderServes, leaderServes}},
		{"two timeouts over a long time", []pr{u("a", 0), u("a", 20000*ms)}, []verdict{leaderServes, leaderServes}},
		// A leader whose machine died: the connection kept from the last
		// probe takes the request and nothing answers; then connections
		// time out.
		{"silent once, then timing out", []pr{s("a", 0), u("a", 1200*ms), u("a", 1550*ms), u("a", 3900*ms), u("a", 4250*ms)},
			[]verdict{leaderServes, leaderServes, leaderServes, leaderServes, leaderUnreachable}},
		{"timed out for one leader, then another", []pr{u("a", 0), u("a", 2000*ms), u("b", 3000*ms), u("b", 4000*ms), u("b", 6000*ms)},
			[]verdict{leaderServes, leaderServes, leaderServes, leaderServes, leaderUnreachable}},
		{"refused, then silent: each counts apart", []pr{r("a", 0), r("a", 500*ms), s("a", 1000*ms), r("a", 2200*ms)},
			[]verdict{leaderServes, leaderServes, leaderServes, leaderServes}},
		{"silent for one leader, then another", []pr{s("a", 0), s("a", 1200*ms), s("b", 2400*ms), s("b", 3600*ms), s("b", 4800*ms)},
			[]verdict{leaderServes, leaderServes, leaderServes, leaderServes, leaderStalled}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p leaderProbes
			start := time.Unix(1700000000, 0)
			for i, x := range tc.probes {
				sent := start.Add(x.at)
				if got := p.observe(x.id, x.result, sent, sent.Add(x.took)); got != tc.want[i] {
					t.Fatalf("probe %d (%+v) = %v, want %v", i, x, got, tc.want[i])
				}
			}
		})
	}
}

// TestVotesToDepose: most of the nodes other than the leader.
func TestVotesToDepose(t *testing.T) {
	for nodes, want := range map[int]int{2: 1, 3: 2, 4: 2, 5: 3, 6: 3, 7: 4, 16: 8} {
		if got := votesToDepose(nodes); got != want {
			t.Errorf("votesToDepose(%d) = %d, want %d", nodes, got, want)
		}
	}
}

// TestProbe probes what a leader's address may be: a node that answers,
// an address nothing listens on, a process that takes connections and
// answers nothing (a listener that never accepts: the kernel takes the
// connection, as a stopped process's does), and an address that does not
// parse.
func TestProbe(t *testing.T) {
	client := &http.Client{Transport: probeTransport(nodeTransport(nil))}
	answering := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable) // any answer is one
	}))
	defer answering.Close()
	if got := probe(client, answering.URL+"/twinlake/health/live"); got != probeAnswered {
		t.Errorf("probe of a server that answers = %v, want answered", got)
	}

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := closed.Addr().String()
	closed.Close()
	if got := probe(client, "http://"+addr+"/twinlake/health/live"); got != probeRefused {
		t.Errorf("probe of an address nothing listens on = %v, want refused", got)
	}

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	start := time.Now()
	if got := probe(client, "http://"+silent.Addr().String()+"/twinlake/health/live"); got != probeSilent {
		t.Errorf("probe of a process that takes connections and answers nothing = %v, want silent", got)
	}
	if took := time.Since(start); took < stallTimeout {
		t.Errorf("the silent probe ended after %v, before its timeout %v", took, stallTimeout)
	}

	if got := probe(client, "http://not an address/"); got != probeFailed {
		t.Errorf("probe of an address that does not parse = %v, want failed", got)
	}

	// Between nodes that use TLS, over the nodes' TLS.
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer secure.Close()
	tlsClient := &http.Client{Transport: probeTransport(nodeTransport(secure.Client().Transport.(*http.Transport).TLSClientConfig))}
	if got := probe(tlsClient, secure.URL+"/twinlake/health/live"); got != probeAnswered {
		t.Errorf("probe over TLS of a server that answers = %v, want answered", got)
	}
	if got := probe(client, secure.URL+"/twinlake/health/live"); got != probeFailed {
		t.Errorf("probe over TLS without the nodes' roots = %v, want failed (it says nothing of the process)", got)
	}
}
