package cli

import (
	"fmt"
	"testing"
)

func TestZZScratch(t *testing.T) {
	e := newReplEnv(t, 2)
	e.must("admin", "config", "set", "site2", "tables", "replica_catalog=on", "replica_catalog_scan_interval=200ms")
	e.must("admin", "replicate", "add", "site1", "site2")
	e.must("table", "warehouse", "create", "site1", "lake")
	e.must("table", "namespace", "create", "site1", "lake", "sales")
	e.must("table", "create", "site1", "lake", "sales", "orders", "--schema", "id:long")
	eventually(t, func() error {
		if st := e.tablesStatus(t, "site2"); st.State != "active" || st.Total != 1 {
			return fmt.Errorf("%+v", st)
		}
		return nil
	})
	e.must("table", "replicate", "failover", "site2")
	e.waitScanner(t, "site2", "disabled")
	e.must("table", "create", "site2", "lake", "sales", "after", "--schema", "id:long")
	for _, a := range [][]string{
		{"table", "replicate", "resync", "open", "site1"},
		{"table", "replicate", "status", "site1"},
		{"admin", "replicate", "resync", "start", "site2", "site1"},
	} {
		out, err := e.run(a...)
		t.Logf("$ twinlake %v\n%s(err=%v)", a, out, err)
	}
	eventually(t, func() error {
		out, err := e.run("admin", "replicate", "resync", "status", "site2", "site1", "--json")
		if err != nil || !contains(out, `"state":"completed"`) {
			return fmt.Errorf("%s %v", out, err)
		}
		return nil
	})
	for _, a := range [][]string{
		{"table", "replicate", "resync", "rebuild", "--yes", "site1"},
	} {
		out, err := e.run(a...)
		t.Logf("$ twinlake %v\n%s(err=%v)", a, out, err)
	}
	eventually(t, func() error {
		if st := e.tablesStatus(t, "site1"); st.State != "active" || st.Total != 2 {
			return fmt.Errorf("%+v", st)
		}
		return nil
	})
	for _, a := range [][]string{
		{"table", "replicate", "status", "site1"},
		{"admin", "config", "get", "site1", "tables"},
	} {
		out, err := e.run(a...)
		t.Logf("$ twinlake %v\n%s(err=%v)", a, out, err)
	}
}

func contains(s, sub string) bool { return len(s) >= len(sub) && (func() bool { for i := 0; i+len(sub) <= len(s); i++ { if s[i:i+len(sub)] == sub { return true } }; return false })() }
