package cli

import (
	"encoding/json"
	"testing"

	"github.com/twinlake/twinlake/internal/testsite"
)

// bench ilm runs its own server, expires the due share and reports, from
// the site's metrics, that the expiry evaluated the due keys only.
func TestBenchILM(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server process for about ten seconds")
	}
	bin := testsite.BuildBinary(t)
	e := newCLIEnv(t)
	out := e.must("bench", "ilm", "--json", "--binary", bin, "--objects", "400", "--due-percent", "5", "--day", "1s", "--concurrency", "8")
	var rep map[string]float64
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep["due"] != 20 || rep["expired"] != 20 || rep["rebuild_keys_evaluated"] != 400 {
		t.Fatalf("report %v", rep)
	}
	if rep["due_keys_evaluated"] != 20 {
		t.Fatalf("the expiry evaluated %v keys for 20 due objects: %v", rep["due_keys_evaluated"], rep)
	}
	for _, bad := range [][]string{{"--objects", "10"}, {"--due-percent", "90"}, {"--day", "10ms"}} {
		if _, err := e.run(append([]string{"bench", "ilm"}, bad...)...); err == nil {
			t.Errorf("bench ilm %v accepted", bad)
		}
	}
}
