package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// TestTableMaintenance drives `table maintenance` and the maintenance
// warehouse settings through a real site: progress lines and a summary,
// a dry run that keeps an old orphan, the run that removes it (and never
// a referenced file), --json as NDJSON ending with the summary, and the
// refusals. (Expiry of snapshots written by an engine is tested with
// apache/iceberg-go in internal/catalog/rest and internal/scanner.)
func TestTableMaintenance(t *testing.T) {
	e := newSiteEnv(t)
	var metadataKey string
	e.runSteps(t, []step{
		{name: "warehouse", args: []string{"table", "warehouse", "create", "s1", "lake"}},
		{name: "policy", args: []string{"table", "warehouse", "set", "s1", "lake", "maintenance=on", "expire_older_than=7d", "retain_last=3", "orphans_older_than=1s"},
			want: []string{"maintenance=on expire_older_than=7d retain_last=3 orphans_older_than=1s"}},
		{name: "bad policy", args: []string{"table", "warehouse", "set", "s1", "lake", "retain_last=0"}, wantErr: "retain_last"},
		{name: "namespace", args: []string{"table", "namespace", "create", "s1", "lake", "sales"}},
		{name: "table", args: []string{"table", "create", "s1", "lake", "sales", "orders", "--schema", "id:long"}, check: func(t *testing.T, out string) {
			i := strings.Index(out, "s3://lake/")
			metadataKey = strings.TrimSuffix(strings.TrimSpace(out[i+len("s3://lake/"):]), ".")
		}},
	})
	base := metadataKey[:strings.Index(metadataKey, "/metadata/")]
	orphan := base + "/data/stray.parquet"
	if _, err := e.c.PutObject(t.Context(), "lake", orphan, bytes.NewReader([]byte("stray")), 5, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	e.runSteps(t, []step{
		{name: "dry run", args: []string{"table", "maintenance", "s1", "lake", "sales", "orders", "--dry-run"},
			want: []string{"expire-snapshots", "nothing to expire", "remove-orphans", "(dry run)", "would remove 1 (5B)", "s3://lake/" + orphan}},
		{name: "unknown table", args: []string{"table", "maintenance", "s1", "lake", "sales", "nope"}, wantErr: "NoSuchTableOrView"},
		{name: "bad age", args: []string{"table", "maintenance", "s1", "lake", "sales", "orders", "--older-than", "5y"}, wantErr: "older-than"},
	})
	if e.content(t, "lake", orphan) != "stray" {
		t.Fatal("the dry run removed the orphan")
	}
	out := e.must("table", "maintenance", "s1", "lake", "sales", "orders", "--remove-orphans", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last adminclient.MaintenanceEvent
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Summary == nil {
		t.Fatalf("last --json line is not the summary: %v\n%s", err, out)
	}
	if s := last.Summary; s.FilesRemoved != 1 || s.BytesRemoved != 5 || s.DryRun || s.SnapshotsExpired != 0 {
		t.Errorf("summary %+v", s)
	}
	if len(lines) < 3 || !strings.Contains(lines[0], `"step":"remove-orphans"`) {
		t.Errorf("progress lines: %s", out)
	}
	if len(e.keys(t, "lake", orphan)) != 0 {
		t.Error("the orphan is still there")
	}
	if e.content(t, "lake", metadataKey) == "" {
		t.Error("maintenance removed the table's metadata file")
	}
	e.runSteps(t, []step{
		{name: "table still loads", args: []string{"table", "show", "s1", "lake", "sales", "orders"}, want: []string{"1 id long"}},
	})
}
