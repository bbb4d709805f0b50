package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/cli/benchcmd"
)

func TestTableCommands(t *testing.T) {
	e := newSiteEnv(t)
	e.runSteps(t, []step{
		{name: "warehouse create", args: []string{"table", "warehouse", "create", "s1", "lake"}, want: []string{"Warehouse `lake` created."}},
		{name: "warehouse create again", args: []string{"table", "warehouse", "create", "s1", "lake"}, wantErr: "WarehouseAlreadyExists"},
		{name: "warehouse create ignore", args: []string{"table", "warehouse", "create", "--ignore-existing", "s1", "lake"}, want: []string{"already exists"}},
		{name: "plain bucket", args: []string{"mb", "s1/plain"}},
		{name: "warehouse over bucket", args: []string{"table", "warehouse", "create", "s1", "plain"}, wantErr: "BucketNotWarehouse"},
		{name: "warehouse upgrade", args: []string{"table", "warehouse", "create", "--upgrade-existing", "s1", "plain"}, want: []string{"created"}},
		{name: "warehouse list", args: []string{"table", "warehouse", "list", "--json", "s1"}, check: func(t *testing.T, out string) {
			var l struct{ Warehouses []struct{ Name string } }
			if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Warehouses) != 2 {
				t.Errorf("list = %s (%v)", out, err)
			}
		}},
		{name: "namespace create", args: []string{"table", "namespace", "create", "s1", "lake", "sales", "--property", "owner=ops"}, want: []string{"created"}},
		{name: "nested namespace", args: []string{"table", "namespace", "create", "s1", "lake", "sales.eu"}},
		{name: "orphan namespace", args: []string{"table", "namespace", "create", "s1", "lake", "nope.eu"}, wantErr: "NoSuchNamespaceException"},
		{name: "namespace list", args: []string{"table", "namespace", "list", "s1", "lake", "sales"}, want: []string{"sales.eu"}},
		{name: "namespace update", args: []string{"table", "namespace", "update", "s1", "lake", "sales", "--set", "tier=gold", "--unset", "owner"}, want: []string{"1 set, 1 removed"}},
		{name: "namespace info", args: []string{"table", "namespace", "info", "s1", "lake", "sales"}, check: func(t *testing.T, out string) {
			if !strings.Contains(out, "tier=gold") || strings.Contains(out, "owner") {
				t.Errorf("info = %s", out)
			}
		}},
		{name: "table create", args: []string{"table", "create", "s1", "lake", "sales.eu", "orders", "--schema", "id:long!,name:string,ts:timestamptz",
			"--partition", "bucket(4,id),day(ts)", "--property", "team=bi"}, want: []string{"Table `sales.eu.orders` created at s3://lake/sales/eu/orders-"}},
		{name: "bad schema", args: []string{"table", "create", "s1", "lake", "sales.eu", "x", "--schema", "id:nonsense"}, wantErr: "--schema column"},
		{name: "table list", args: []string{"table", "list", "s1", "lake", "sales.eu"}, want: []string{"sales.eu.orders"}},
		{name: "table show", args: []string{"table", "show", "s1", "lake", "sales.eu", "orders"}, want: []string{"Location:  s3://lake/sales/eu/orders", "1 id long", "team=bi"}},
		{name: "namespace not empty", args: []string{"table", "namespace", "remove", "--yes", "s1", "lake", "sales.eu"}, wantErr: "NamespaceNotEmptyException"},
		{name: "table rename", args: []string{"table", "rename", "s1", "lake", "sales.eu", "orders", "orders_v1", "--to-namespace", "sales"}, want: []string{"renamed to `sales.orders_v1`"}},
		{name: "view create", args: []string{"table", "view", "create", "s1", "lake", "sales", "recent", "--schema", "id:long", "--sql", "SELECT id FROM orders_v1"}, want: []string{"created"}},
		{name: "view list", args: []string{"table", "view", "list", "s1", "lake", "sales"}, want: []string{"sales.recent"}},
		{name: "view show", args: []string{"table", "view", "show", "s1", "lake", "sales", "recent"}, want: []string{"SQL (spark): SELECT id FROM orders_v1"}},
		{name: "view drop", args: []string{"table", "view", "drop", "--yes", "s1", "lake", "sales", "recent"}, want: []string{"dropped"}},
		{name: "table remove", args: []string{"table", "remove", "--purge", "--yes", "s1", "lake", "sales", "orders_v1"}, want: []string{"removed"}},
		{name: "table gone", args: []string{"table", "show", "s1", "lake", "sales", "orders_v1"}, wantErr: "NoSuchTableException"},
		{name: "encrypt set", args: []string{"table", "encrypt", "set", "s1", "lake"}, want: []string{"encryption: AES256"}},
		{name: "encrypt info", args: []string{"table", "encrypt", "info", "--json", "s1", "lake"}, want: []string{`"encryption":"AES256"`}},
		{name: "encrypt clear", args: []string{"table", "encrypt", "clear", "s1", "lake"}, want: []string{"no default encryption"}},
		{name: "warehouse not empty", args: []string{"table", "warehouse", "remove", "--yes", "s1", "lake"}, wantErr: "WarehouseNotEmpty"},
		{name: "namespace remove child", args: []string{"table", "namespace", "remove", "--yes", "s1", "lake", "sales.eu"}},
		{name: "namespace remove", args: []string{"table", "namespace", "remove", "--yes", "s1", "lake", "sales"}},
		{name: "warehouse remove", args: []string{"table", "warehouse", "remove", "--yes", "s1", "lake"}, want: []string{"removed"}},
		{name: "unknown warehouse", args: []string{"table", "namespace", "list", "s1", "lake"}, wantErr: "NoSuchWarehouseException"},
	})
}

func TestBenchCatalog(t *testing.T) {
	e := newSiteEnv(t)
	out := e.must("bench", "catalog", "s1", "--tables", "30", "--hot-tables", "3", "--count", "40", "--reads", "50", "--concurrency", "4", "--snapshots", "1500", "--page-size", "10", "--purge-files", "1200", "--json")
	var rep benchcmd.BenchCatalogReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	want := []string{"commit-1", "commit-3", "commit-1-3w", "create", "load", "list-33", "list-paged-10", "load-all-1500snap", "load-refs-1500snap", "load-304-1500snap", "purge-1200files"}
	if len(rep.Results) != len(want) {
		t.Fatalf("rows = %+v", rep.Results)
	}
	for i, r := range rep.Results {
		if r.Op != want[i] || r.Ops == 0 || r.Errors != 0 || r.P50Ms <= 0 {
			t.Errorf("row %d = %+v, want op %s with ops and latencies", i, r, want[i])
		}
	}
	// The purge of 1,200 data files in two manifests, their list and two
	// metadata files (the bench checks that no data file is left).
	if r := rep.Results[len(want)-1]; r.KeysPerSec <= 0 || math.Abs(r.KeysPerSec*r.Seconds-1205) > 1 {
		t.Errorf("purge row %+v: want 1205 files deleted in its time", r)
	}
	// The bench removed what it created.
	if out := e.must("table", "warehouse", "list", "s1"); strings.TrimSpace(out) != "" {
		t.Errorf("warehouses left behind: %s", out)
	}
}
