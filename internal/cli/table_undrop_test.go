package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestTableSoftDeleteUndrop runs soft delete end to end through a real
// site: a dropped (and purge-requested) table disappears but keeps its
// files, list --deleted shows it, undrop --as brings it back; views
// likewise; with a 1s retention the background expiry purges the files.
func TestTableSoftDeleteUndrop(t *testing.T) {
	e := newSiteEnv(t)
	var metadataKey string
	e.runSteps(t, []step{
		{name: "warehouse", args: []string{"table", "warehouse", "create", "s1", "lake"}},
		{name: "bad retention", args: []string{"table", "warehouse", "set", "s1", "lake", "soft_delete=3651d"}, wantErr: "InvalidWarehouse"},
		{name: "unknown setting", args: []string{"table", "warehouse", "set", "s1", "lake", "nope=1"}, wantErr: "unknown setting"},
		{name: "soft delete on", args: []string{"table", "warehouse", "set", "s1", "lake", "soft_delete=7d"}, want: []string{"soft_delete=7d"}},
		{name: "namespace", args: []string{"table", "namespace", "create", "s1", "lake", "sales"}},
		{name: "table", args: []string{"table", "create", "s1", "lake", "sales", "orders", "--schema", "id:long"}, check: func(t *testing.T, out string) {
			i := strings.Index(out, "s3://lake/")
			metadataKey = strings.TrimSuffix(strings.TrimSpace(out[i+len("s3://lake/"):]), ".")
		}},
		{name: "drop with purge", args: []string{"table", "remove", "--purge", "--yes", "s1", "lake", "sales", "orders"}},
		{name: "gone from load", args: []string{"table", "show", "s1", "lake", "sales", "orders"}, wantErr: "NoSuchTableException"},
		{name: "gone from list", args: []string{"table", "list", "s1", "lake", "sales"}, check: func(t *testing.T, out string) {
			if strings.Contains(out, "orders") {
				t.Errorf("list = %s", out)
			}
		}},
		{name: "list deleted", args: []string{"table", "list", "--deleted", "s1", "lake", "sales"}, want: []string{"sales.orders  dropped", "expires"}},
		{name: "view", args: []string{"table", "view", "create", "s1", "lake", "sales", "recent", "--schema", "id:long", "--sql", "SELECT 1"}},
		{name: "view drop", args: []string{"table", "view", "drop", "--yes", "s1", "lake", "sales", "recent"}},
		{name: "view deleted", args: []string{"table", "view", "list", "--deleted", "s1", "lake", "sales"}, want: []string{"sales.recent"}},
		{name: "view undrop", args: []string{"table", "view", "undrop", "s1", "lake", "sales", "recent"}, want: []string{"restored"}},
		{name: "view back", args: []string{"table", "view", "show", "s1", "lake", "sales", "recent"}, want: []string{"SELECT 1"}},
		{name: "undrop unknown", args: []string{"table", "undrop", "s1", "lake", "sales", "nope"}, wantErr: "NoSuchTableOrView"},
		{name: "undrop as", args: []string{"table", "undrop", "s1", "lake", "sales", "orders", "--as", "orders2"}, want: []string{"restored as `sales.orders2`"}},
		{name: "back", args: []string{"table", "show", "s1", "lake", "sales", "orders2"}, want: []string{"1 id long"}},
		{name: "deleted list empty", args: []string{"table", "list", "--deleted", "--json", "s1", "lake", "sales"}, want: []string{`"entries":[]`}},
		{name: "short retention", args: []string{"table", "warehouse", "set", "s1", "lake", "soft_delete=1s"}},
		{name: "drop again", args: []string{"table", "remove", "--yes", "s1", "lake", "sales", "orders2"}},
	})
	if e.content(t, "lake", metadataKey) == "" {
		t.Fatalf("metadata file %s gone right after the soft drop", metadataKey)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		keys := e.keys(t, "lake", metadataKey)
		if len(keys) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("expiry did not purge %s", metadataKey)
		}
		time.Sleep(200 * time.Millisecond)
	}
	var l struct{ Entries []json.RawMessage }
	if err := json.Unmarshal([]byte(e.must("table", "list", "--deleted", "--json", "s1", "lake", "sales")), &l); err != nil || len(l.Entries) != 0 {
		t.Fatalf("deleted after expiry: %+v %v", l, err)
	}
	e.runSteps(t, []step{
		{name: "off", args: []string{"table", "warehouse", "set", "s1", "lake", "soft_delete=off"}, want: []string{"soft_delete=off"}},
	})
}
