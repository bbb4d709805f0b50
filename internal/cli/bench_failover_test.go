package cli

import (
	"encoding/json"
	"testing"

	"github.com/twinlake/twinlake/internal/testsite"
)

// bench failover runs its own site of node processes, kills the leader,
// pauses the next one and cuts off the one after (killed, its ports taking
// no connection), and reports for each fault the read and the write
// served through another node, and the new leader.
func TestBenchFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three server processes for about twenty seconds")
	}
	bin := testsite.BuildBinary(t)
	e := newCLIEnv(t)
	out := e.must("bench", "failover", "--json", "--binary", bin, "--nodes", "3", "--rounds", "1", "--lease", "30s")
	var rep struct {
		Nodes   int `json:"nodes"`
		Results []struct {
			Fault     string  `json:"fault"`
			Leader    string  `json:"leader"`
			NewLeader string  `json:"new_leader"`
			FirstGET  float64 `json:"first_get_seconds"`
			FirstPUT  float64 `json:"first_put_seconds"`
			Attempts  int     `json:"put_attempts"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Nodes != 3 || len(rep.Results) != 3 || rep.Results[0].Fault != "kill" || rep.Results[1].Fault != "pause" || rep.Results[2].Fault != "cut" {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Results {
		// Served before the lease ran out: the others deposed the leader.
		if r.NewLeader == "" || r.NewLeader == r.Leader || r.FirstGET <= 0 || r.FirstGET >= 30 || r.FirstPUT <= 0 || r.FirstPUT >= 30 || r.Attempts < 1 {
			t.Errorf("%s: %+v", r.Fault, r)
		}
	}
	for _, bad := range [][]string{{"--nodes", "2"}, {"--faults", "crash"}, {"--lease", "1s"}, {"--rounds", "0"}} {
		if _, err := e.run(append([]string{"bench", "failover"}, bad...)...); err == nil {
			t.Errorf("bench failover %v accepted", bad)
		}
	}
}
