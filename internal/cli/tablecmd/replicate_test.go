package tablecmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func TestTableReplicateStatusRendering(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	tests := []struct {
		name    string
		st      adminclient.TablesReplicationStatus
		want    []string
		notWant []string
	}{
		{
			name:    "disabled",
			st:      adminclient.TablesReplicationStatus{State: "disabled", Consistency: "strict", Leader: true},
			want:    []string{"Scanner: disabled\n", "scanner runs only on the replica"},
			notWant: []string{"Consistency", "Cycles", "Rebuild"},
		},
		{
			name: "entries",
			st: adminclient.TablesReplicationStatus{State: "active", Consistency: "strict", Leader: true, Cycles: 7,
				LastCycle: at, CycleTime: 1500 * time.Microsecond, Total: 5, Offset: 0, Entries: []adminclient.TablesEntryStatus{
					{Warehouse: "lake", Namespace: []string{"sales", "eu"}, Name: "orders", Kind: "table", Status: "OK", Verified: 4, Latest: 4},
					{Warehouse: "lake", Namespace: []string{"sales", "eu"}, Name: "recent", Kind: "view", Status: "2 versions behind", Verified: 1, Latest: 3, Behind: 2,
						MissingFiles: []string{"lake/sales/eu/orders/data/a.parquet", "lake/sales/eu/orders/data/b.parquet"}},
					{Warehouse: "lake", Namespace: []string{"ops"}, Name: "ledger", Kind: "table", Status: "Held", Verified: -1, Latest: 9, Transaction: "tx-42"},
					{Warehouse: "wh2", Namespace: []string{"ops"}, Name: "gone", Kind: "table", Status: "Deleted", Verified: 3, Latest: 3},
				}},
			want: []string{"Scanner: active\n", "  Cycles:      7\n", "  Last cycle:  2025-03-04 05:06:07 UTC, took 1.5ms\n",
				"Warehouse: lake\n  Namespace: sales.eu\n    Table: orders\n      Status:   OK\n      Verified: 4\n      Latest:   4\n    View: recent\n",
				"      Status:   2 versions behind\n", "      Missing Files: 2\n        lake/sales/eu/orders/data/a.parquet\n        lake/sales/eu/orders/data/b.parquet\n",
				"  Namespace: ops\n    Table: ledger\n      Status:   Held\n      Verified: -1 (held for multi-table transaction tx-42)\n",
				"\nWarehouse: wh2\n  Namespace: ops\n    Table: gone\n      Status:   Deleted\n",
				"Showing 1-4 of 5. Next: --offset 4"},
			notWant: []string{"Promotion", "Resync window", "Rebuild"},
		},
		{
			name: "promoting and rebuilding",
			st: adminclient.TablesReplicationStatus{State: "rebuilding", Consistency: "strict", Leader: true, Promoting: true, Window: true, Total: 3, Offset: 3,
				Rebuild: adminclient.TablesRebuildStatus{State: "FailureRetry", Attempts: 2, LastError: "primary site1: link down",
					Started: at, BackupAt: "rebuild-20250304T050607.000Z", Discarded: 4}},
			want: []string{"  Promotion:     in progress\n", "  Resync window: open\n", "  Rebuild:\n    State:      FailureRetry\n    Attempts:   2\n",
				"    Last error: primary site1: link down\n", "    Backup:     rebuild-20250304T050607.000Z\n", "    Discarded:  4 local-only record versions\n",
				"No tables or views from offset 3 (3 in all)."},
			notWant: []string{"Finished"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tablesStatusHuman(tt.st)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("has %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestTableReplicateErrorHints(t *testing.T) {
	tests := []struct {
		code string
		want string
	}{
		{adminclient.CodeNotReplica, "site9 has tables replica_catalog=off"},
		{adminclient.CodeReplicaReadOnly, ""},
		{adminclient.CodeRoleConflict, "twinlake table replicate catalog reset site9"},
		{adminclient.CodeNoResyncWindow, "twinlake table replicate resync open site9"},
		{adminclient.CodePeerResyncActive, "twinlake admin replicate resync status NEW_PRIMARY site9"},
		{adminclient.CodeBackfillRunning, "twinlake table replicate backfill status site9"},
		{adminclient.CodeNotConfirmed, "pass --yes"},
		{"SomethingElse", ""},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			cause := &adminclient.Error{Code: tt.code, Message: "refused:\n  because", StatusCode: 409}
			err := tablesReplErr("table replicate x site9", "site9", cause)
			msg := err.Error()
			if !strings.HasPrefix(msg, "table replicate x site9: refused: because ("+tt.code+", HTTP 409)") || strings.Contains(msg, "\n") {
				t.Errorf("error = %q", msg)
			}
			hint, _ := strings.CutPrefix(msg, "table replicate x site9: refused: because ("+tt.code+", HTTP 409)")
			if tt.want == "" && hint != "" || tt.want != "" && !strings.HasPrefix(hint, ": ") || !strings.Contains(hint, tt.want) {
				t.Errorf("error = %q, want hint %q", msg, tt.want)
			}
			if adminErrorCode(err) != tt.code {
				t.Errorf("code lost in wrapping: %v", err)
			}
		})
	}
	if tablesReplErr("x", "a", nil) != nil {
		t.Error("nil error wrapped")
	}
}

func TestTableReplicateConfirm(t *testing.T) {
	file := filepath.Join(t.TempDir(), "answers")
	if err := os.WriteFile(file, []byte("y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      func(t *testing.T) io.Reader
		yes     bool
		wantErr string // "" means confirmed
	}{
		{"yes flag", func(*testing.T) io.Reader { return strings.NewReader("") }, true, ""},
		{"answer y", func(*testing.T) io.Reader { return strings.NewReader("y\n") }, false, ""},
		{"answer YES unterminated", func(*testing.T) io.Reader { return strings.NewReader(" YES") }, false, ""},
		{"answer n", func(*testing.T) io.Reader { return strings.NewReader("n\n") }, false, ErrTablesAborted.Error()},
		{"answer blank", func(*testing.T) io.Reader { return strings.NewReader("\n") }, false, ErrTablesAborted.Error()},
		{"no answer", func(*testing.T) io.Reader { return strings.NewReader("") }, false, "no answer on stdin: pass --yes to confirm"},
		{"not a terminal", func(t *testing.T) io.Reader {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}, false, "stdin is not a terminal, so the prompt cannot be answered: pass --yes to confirm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := &cobra.Command{}
			var errOut strings.Builder
			cmd.SetIn(tt.in(t))
			cmd.SetErr(&errOut)
			err := tablesConfirm(cmd, tt.yes, "table replicate x a", "Go?")
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "table replicate x a: ")):
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestPrintRebuildFailed: a rebuild that failed prints, with --json, one
// document holding its status, "status":"error" and the reason, and the
// error it returns is marked printed, so that no second document follows;
// without --json the status is printed and the error returned as it is.
func TestPrintRebuildFailed(t *testing.T) {
	r := adminclient.TablesRebuildStatus{State: rebuildFailed, Attempts: 3, LastError: "peer unreachable"}
	var out bytes.Buffer
	err := printRebuildFailed(&out, &cmdutil.Options{JSON: true}, "site1", r, "human")
	if err == nil || !cmdutil.AlreadyPrinted(err) || !strings.Contains(err.Error(), "peer unreachable") {
		t.Fatalf("with --json: %v", err)
	}
	dec := json.NewDecoder(&out)
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc["status"] != "error" || doc["state"] != rebuildFailed || doc["attempts"] != 3.0 ||
		!strings.Contains(fmt.Sprint(doc["error"]), "catalog rebuild of site1 failed: peer unreachable") {
		t.Errorf("document: %v", doc)
	}
	if dec.More() {
		t.Errorf("a second document follows: %s", out.String())
	}
	out.Reset()
	err = printRebuildFailed(&out, &cmdutil.Options{}, "site1", r, "human")
	if err == nil || cmdutil.AlreadyPrinted(err) || out.String() != "human\n" {
		t.Errorf("without --json: %v, %q", err, out.String())
	}
}
