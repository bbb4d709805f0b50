package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/cli/benchcmd"
)

// TestBenchConsole times every console page of a site that holds a bucket
// and a table, through the command.
func TestBenchConsole(t *testing.T) {
	e := newSiteEnv(t)
	e.must("mb", "s1/photos")
	e.must("table", "warehouse", "create", "s1", "lake")
	e.must("table", "namespace", "create", "s1", "lake", "sales")
	e.must("table", "create", "s1", "lake", "sales", "orders", "--schema", "id:long")
	out := e.must("bench", "console", "s1", "--requests", "5", "--json")
	var rep benchcmd.BenchConsoleReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	var pages []string
	for _, r := range rep.Results {
		pages = append(pages, r.Page)
		if r.Requests != 5 || r.ServerP50Ms <= 0 || r.RoundP50Ms < r.ServerP50Ms || r.ServerMaxMs < r.ServerP50Ms {
			t.Errorf("row %+v", r)
		}
	}
	if got := strings.Join(pages, ","); got != "sites,tables-dr,buckets,objects,warehouses,namespaces,tables,server" {
		t.Fatalf("pages %s", got)
	}
	if human := e.must("bench", "console", "s1", "--requests", "2"); !strings.Contains(human, "SERVER P50") || !strings.Contains(human, "tables") {
		t.Fatalf("table output:\n%s", human)
	}
}
