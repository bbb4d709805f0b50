package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/tablecmd"
)

// tablesStatus reads table replicate status --json.
func (e replEnv) tablesStatus(t *testing.T, alias string, args ...string) adminclient.TablesReplicationStatus {
	t.Helper()
	return decode[adminclient.TablesReplicationStatus](t, e, append([]string{"table", "replicate", "status", alias}, args...)...)
}

// waitScanner polls status until the scanner reports state.
func (e replEnv) waitScanner(t *testing.T, alias, state string) {
	t.Helper()
	eventually(t, func() error {
		st := e.tablesStatus(t, alias)
		if st.State != state {
			return fmt.Errorf("scanner %s, want %s", st.State, state)
		}
		return nil
	})
}

// tableReplArgs is the command line table replicate ARGS...
func tableReplArgs(args ...string) []string { return append([]string{"table", "replicate"}, args...) }

// waitBackfill starts a backfill and follows it (--wait) until it completes.
// A start is retried while refused as running: the server reports the previous run
// completed a moment before it lets a new one start.
func (e replEnv) waitBackfill(t *testing.T, alias string) adminclient.BackfillJob {
	t.Helper()
	var started adminclient.BackfillJob
	eventually(t, func() error {
		out, err := e.run("table", "replicate", "backfill", "start", alias, "--wait", "--json")
		if adminCode(err) == adminclient.CodeBackfillRunning {
			return err
		}
		if err != nil {
			t.Fatalf("backfill start: %v", err)
		}
		started = decodeString[adminclient.BackfillJob](t, out)
		return nil
	})
	// --wait returns once the backfill has ended.
	if started.ID == "" || started.Started.IsZero() || started.State != "completed" {
		t.Fatalf("backfill start --wait = %+v", started)
	}
	var job adminclient.BackfillJob
	eventually(t, func() error {
		job = decode[adminclient.BackfillJob](t, e, "table", "replicate", "backfill", "status", alias)
		if job.ID != started.ID || job.State != "completed" {
			return fmt.Errorf("backfill = %+v, want %s completed", job, started.ID)
		}
		return nil
	})
	return job
}

// decodeString decodes a --json command's output.
func decodeString[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	return v
}

func TestTableReplicatePrimary(t *testing.T) {
	e := newReplEnv(t, 1)

	e.contains(t, tableReplArgs("status", "site1"), "Scanner: disabled", "No tables or views tracked")
	if st := e.tablesStatus(t, "site1"); st.State != "disabled" || st.Total != 0 || st.Entries == nil {
		t.Errorf("status --json = %+v", st)
	}
	e.fails(t, tableReplArgs("failover", "site1"), "table replicate failover site1", "NotTablesReplica",
		"site1 has tables replica_catalog=off")
	e.fails(t, tableReplArgs("catalog", "reset", "--yes", "site1"), "NotTablesReplica")
	e.fails(t, tableReplArgs("resync", "rebuild", "--yes", "site1"), "NoCatalogResyncWindow", "twinlake table replicate resync open site1")
	e.fails(t, tableReplArgs("resync", "rebuild", "site1"), "pass --yes to confirm") // empty stdin: no one to answer
	e.fails(t, tableReplArgs("backfill", "status"), "accepts 1 arg")
	e.fails(t, tableReplArgs("backfill", "bogus", "site1"), "unknown command")

	e.contains(t, tableReplArgs("backfill", "status", "site1"), "No backfill has run")
	if none := decode[adminclient.BackfillJob](t, e, tableReplArgs("backfill", "status", "site1")...); none.State != "none" {
		t.Errorf("backfill status --json with none = %+v", none)
	}
	e.contains(t, tableReplArgs("backfill", "cancel", "site1"), "nothing to cancel")

	e.must("table", "warehouse", "create", "site1", "lake")
	e.must("table", "namespace", "create", "site1", "lake", "sales")
	e.must("table", "create", "site1", "lake", "sales", "orders", "--schema", "id:long")
	e.must("table", "view", "create", "site1", "lake", "sales", "recent", "--schema", "id:long", "--sql", "SELECT id FROM orders")

	first := e.waitBackfill(t, "site1")
	if first.Warehouses < 1 || first.Namespaces < 1 || first.Tables < 1 || first.Views < 1 ||
		first.Written+first.Unchanged < 3 || first.Error != "" || first.Finished.IsZero() {
		t.Errorf("first backfill = %+v", first)
	}
	e.contains(t, tableReplArgs("backfill", "status", "site1"), "Backfill of site1:", "State:", "completed", "Tables:", "Records written:", "Unchanged:")

	// Idempotent: a second run finds every record in place.
	second := e.waitBackfill(t, "site1")
	if second.ID == first.ID || second.Written != 0 || second.Unchanged != first.Written+first.Unchanged {
		t.Errorf("second backfill = %+v after %+v", second, first)
	}
	e.contains(t, tableReplArgs("backfill", "cancel", "site1"), "was not running (completed): nothing to cancel")
}

func TestTableReplicateReplicaLifecycle(t *testing.T) {
	e := newReplEnv(t, 1)
	e.must("alias", "set", "dead", "http://127.0.0.1:1", "AKIAEXAMPLE", "secret-secret-secret")

	e.must("admin", "config", "set", "site1", "tables", "replica_catalog=on", "replica_catalog_scan_interval=200ms")
	e.waitScanner(t, "site1", "active")
	st := e.tablesStatus(t, "site1")
	if st.Consistency != "strict" || st.Cycles < 1 || st.LastCycle.IsZero() || !st.Leader {
		t.Errorf("status = %+v", st)
	}
	e.contains(t, tableReplArgs("status", "site1"), "Scanner: active", "Consistency:", "strict", "Cycles:", "Last cycle:", "No tables or views tracked yet.")

	e.must("admin", "config", "set", "site1", "tables", "replica_catalog_consistency=eventual")
	e.waitScanner(t, "site1", "tracking")

	// Destructive commands ask first; a no, or no answer, stops before any
	// call (the dead alias would fail to connect).
	for _, alias := range []string{"site1", "dead"} {
		_, errOut, err := e.runIn("n\n", tableReplArgs("catalog", "reset", alias)...)
		if !errors.Is(err, tablecmd.ErrTablesAborted) {
			t.Errorf("catalog reset %s answered n: %v", alias, err)
		}
		if want := "This backs up and deletes the local catalog of " + alias; !strings.Contains(errOut, want) || !strings.Contains(errOut, "Continue? [y/N]") {
			t.Errorf("prompt = %q", errOut)
		}
		_, _, err = e.runIn("n\n", tableReplArgs("resync", "rebuild", alias)...)
		if !errors.Is(err, tablecmd.ErrTablesAborted) {
			t.Errorf("resync rebuild %s answered n: %v", alias, err)
		}
	}
	e.fails(t, tableReplArgs("catalog", "reset", "site1"), "pass --yes to confirm")

	out, _, err := e.runIn("yes\n", tableReplArgs("catalog", "reset", "site1")...)
	if err != nil || !strings.Contains(out, "Catalog of site1 backed up to reset-") || !strings.Contains(out, "rebuilds it on its next cycle") {
		t.Fatalf("catalog reset answered yes = %q, %v", out, err)
	}
	if res := decode[adminclient.CatalogResetResult](t, e, tableReplArgs("catalog", "reset", "--yes", "site1")...); !strings.HasPrefix(res.Backup, "reset-") {
		t.Errorf("catalog reset --json = %+v", res)
	}
	e.waitScanner(t, "site1", "tracking")

	e.fails(t, tableReplArgs("resync", "open", "site1"), "TablesRoleConflict", "catalog reset site1")
	e.fails(t, tableReplArgs("backfill", "start", "site1"), "TablesReplicaReadOnly", "run the backfill on the primary")

	// Failover: returns at once, completes on the next cycle.
	e.contains(t, tableReplArgs("failover", "site1"), "Promotion of site1 requested", "completes asynchronously",
		"monitor with twinlake table replicate status site1")
	e.waitScanner(t, "site1", "disabled")
	e.contains(t, []string{"admin", "config", "get", "site1", "tables"}, "replica_catalog=off")
	e.fails(t, tableReplArgs("failover", "site1"), "NotTablesReplica")

	// Demotion, phase 1: the window opens; with no peer there is nothing
	// to rebuild from.
	e.contains(t, tableReplArgs("resync", "open", "site1"), "Catalog resync window open on site1", "State:", "Pending")
	e.contains(t, tableReplArgs("status", "site1"), "Scanner: rebuilding", "Resync window: open", "Rebuild:", "Pending")
	e.fails(t, tableReplArgs("resync", "rebuild", "--yes", "site1"), "ReplicationNotConfigured", "no site replication peer")
}

func TestTableReplicateTwoSites(t *testing.T) {
	e := newReplEnv(t, 2)

	e.must("admin", "config", "set", "site2", "tables", "replica_catalog=on", "replica_catalog_scan_interval=200ms")
	e.must("admin", "replicate", "add", "site1", "site2")
	e.fails(t, []string{"admin", "config", "set", "site1", "tables", "replica_catalog=on"}, "already the replica")
	e.contains(t, []string{"admin", "config", "get", "site1", "tables"}, "replica_catalog=off")

	e.must("table", "warehouse", "create", "site1", "lake")
	e.must("table", "namespace", "create", "site1", "lake", "sales")
	e.must("table", "create", "site1", "lake", "sales", "orders", "--schema", "id:long")
	e.must("table", "create", "site1", "lake", "sales", "returns", "--schema", "id:long")
	eventually(t, func() error {
		st := e.tablesStatus(t, "site2")
		if st.State != "active" || st.Total != 2 {
			return fmt.Errorf("replica status = %+v", st)
		}
		for _, en := range st.Entries {
			if en.Warehouse != "lake" || strings.Join(en.Namespace, ".") != "sales" || en.Kind != "table" ||
				en.Status != "OK" || en.Verified != en.Latest || en.Behind != 0 || len(en.MissingFiles) != 0 {
				return fmt.Errorf("entry = %+v", en)
			}
		}
		return nil
	})
	out := e.contains(t, tableReplArgs("status", "site2"), "Scanner: active", "Warehouse: lake", "  Namespace: sales",
		"    Table: orders", "    Table: returns", "Verified:", "Latest:")
	if strings.Count(out, "Warehouse: lake") != 1 || strings.Count(out, "Namespace: sales") != 1 || strings.Contains(out, "Showing") {
		t.Errorf("status is not grouped once per warehouse and namespace:\n%s", out)
	}
	e.contains(t, tableReplArgs("status", "site2", "--limit", "1"), "Table: orders", "Showing 1-1 of 2. Next: --offset 1")
	out = e.contains(t, tableReplArgs("status", "site2", "--offset", "1"), "Table: returns", "Showing 2-2 of 2.")
	if strings.Contains(out, "orders") || strings.Contains(out, "Next:") {
		t.Errorf("--offset 1:\n%s", out)
	}
	if st := e.tablesStatus(t, "site2", "--offset", "1", "--limit", "5"); st.Total != 2 || st.Offset != 1 || len(st.Entries) != 1 {
		t.Errorf("--offset 1 --limit 5 --json = %+v", st)
	}
	e.fails(t, tableReplArgs("status", "site2", "--limit", "-1"), "must not be negative")
	e.contains(t, tableReplArgs("status", "site1"), "Scanner: disabled")
}

// TestTableReplicateFailoverAndDemote runs the recovery runbook: fail over
// to the replica, write there, then demote the old primary with resync
// open, an object resync from the new primary and resync rebuild.
func TestTableReplicateFailoverAndDemote(t *testing.T) {
	e := newReplEnv(t, 2)
	e.must("admin", "config", "set", "site2", "tables", "replica_catalog=on", "replica_catalog_scan_interval=200ms")
	e.must("admin", "replicate", "add", "site1", "site2")
	e.must("table", "warehouse", "create", "site1", "lake")
	e.must("table", "namespace", "create", "site1", "lake", "sales")
	e.must("table", "create", "site1", "lake", "sales", "orders", "--schema", "id:long")
	eventually(t, func() error {
		if st := e.tablesStatus(t, "site2"); st.State != "active" || st.Total != 1 {
			return fmt.Errorf("replica status = %+v", st)
		}
		return nil
	})

	e.contains(t, tableReplArgs("failover", "site2"), "Promotion of site2 requested")
	e.waitScanner(t, "site2", "disabled")
	e.must("table", "create", "site2", "lake", "sales", "after_failover", "--schema", "id:long")

	e.contains(t, tableReplArgs("resync", "open", "site1"), "Catalog resync window open on site1", "Pending")
	e.must("admin", "replicate", "resync", "start", "site2", "site1")
	eventually(t, func() error {
		job := decode[adminclient.ResyncStatus](t, e, "admin", "replicate", "resync", "status", "site2", "site1")
		if job.State != "completed" {
			return fmt.Errorf("resync = %+v", job)
		}
		return nil
	})
	out, _, err := e.runIn("y\n", tableReplArgs("resync", "rebuild", "site1")...)
	if err != nil || !strings.Contains(out, "Catalog rebuild of site1 started") || !strings.Contains(out, "Backup:") {
		t.Fatalf("resync rebuild answered y = %q, %v", out, err)
	}
	eventually(t, func() error {
		st := e.tablesStatus(t, "site1")
		if st.State != "active" || st.Window || st.Rebuild.State != "Completed" || st.Total != 2 {
			return fmt.Errorf("demoted site status = %+v", st)
		}
		return nil
	})
	e.contains(t, tableReplArgs("status", "site1"), "Scanner: active", "Rebuild:", "Completed", "Backup:", "rebuild-", "Table: after_failover", "Table: orders")
	e.contains(t, []string{"admin", "config", "get", "site1", "tables"}, "replica_catalog=on")
	e.contains(t, []string{"admin", "config", "get", "site2", "tables"}, "replica_catalog=off")
}

// adminCode is the admin API error code err carries, or "".
func adminCode(err error) string {
	if ae, ok := errors.AsType[*adminclient.Error](err); ok {
		return ae.Code
	}
	return ""
}
