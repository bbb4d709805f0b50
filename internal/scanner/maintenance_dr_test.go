package scanner_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

// TestMaintenanceOnPrimaryKeepsReplicaOK: snapshot expiry, orphan removal
// and metadata pruning run on the primary; their deletions replicate, and
// the replica — strict consistency, so it checks every file of the
// versions it verifies — stays OK at the primary's version with nothing
// missing, serving every row. Maintenance on the replica is refused.
func TestMaintenanceOnPrimaryKeepsReplicaOK(t *testing.T) {
	p := newDRPair(t, tablesSettings)
	ctx := context.Background()
	cat := p.catalog(p.primary)
	id := table.Identifier{"ns", "t"}
	tbl := newTable(t, cat, id, nil)
	if _, _, err := cat.CommitTable(ctx, id, nil, []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{
		table.MetadataDeleteAfterCommitEnabledKey: "true", table.MetadataPreviousVersionsMaxKey: "2"})}); err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 4; i++ {
		if _, err := icetest.AppendRetry(ctx, cat, id, i*5, i*5+5); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	waitVerified(t, p.replica, "ns", "t", metadataVersion(tbl), 20*time.Second)
	oldLists := []string{}
	for _, s := range tbl.Metadata().Snapshots()[:3] {
		oldLists = append(oldLists, strings.TrimPrefix(s.ManifestList, "s3://lake/"))
	}
	orphan := strings.TrimPrefix(tbl.Location(), "s3://lake/") + "/data/stray.parquet"
	if _, err := p.s3(p.primary).PutObject(ctx, p.warehous, orphan, strings.NewReader("stray"), 5, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)

	// The replica refuses to run maintenance: its primary's replicates.
	req := adminclient.MaintenanceRequest{Namespace: []string{"ns"}, Name: "t", ExpireSnapshots: true, OlderThan: "1s",
		RetainLast: 1, RemoveOrphans: true, OrphansOlderThan: "1s"}
	var ae *adminclient.Error
	if _, err := p.admin(p.replica).MaintainTable(ctx, p.warehous, req, nil); !errors.As(err, &ae) || ae.Code != adminclient.CodeReplicaReadOnly {
		t.Errorf("maintenance on the replica: err = %v, want ReplicaReadOnly", err)
	}
	sum, err := p.admin(p.primary).MaintainTable(ctx, p.warehous, req, nil)
	if err != nil {
		t.Fatalf("maintenance on the primary: %v", err)
	}
	if sum.SnapshotsExpired != 3 || sum.FilesRemoved < 4 {
		t.Errorf("summary %+v, want 3 snapshots expired and their manifest lists and the orphan removed", sum)
	}
	tbl, err = cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	version := metadataVersion(tbl)
	testsite.Eventually(t, 15*time.Second, func() error { return testsite.Drained(p.primary.Site) })
	waitVerified(t, p.replica, "ns", "t", version, 20*time.Second)

	replicaS3 := p.s3(p.replica)
	for _, k := range append(oldLists, orphan) {
		if _, err := replicaS3.StatObject(ctx, p.warehous, k, minio.StatObjectOptions{}); err == nil {
			t.Errorf("%s, which maintenance deleted on the primary, is still on the replica", k)
		}
	}
	for _, e := range p.replica.Server().Scanner().Status(0, 0).Entries {
		if e.Status != "OK" || len(e.MissingFiles) > 0 {
			t.Errorf("replica entry %v.%s: status %q, missing %v", e.Namespace, e.Name, e.Status, e.MissingFiles)
		}
	}
	rtbl, err := p.catalog(p.replica).LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rtbl.Metadata().Snapshots()); n != 1 {
		t.Errorf("the replica serves %d snapshots, want 1", n)
	}
	if ids := scan(t, p.catalog(p.replica), id); !slices.Equal(ids, icetest.Seq(0, 20)) {
		t.Errorf("rows on the replica: %v, want 0..19", ids)
	}

	// A write after maintenance reaches the replica as usual.
	if _, err := icetest.AppendRetry(ctx, cat, id, 20, 25); err != nil {
		t.Fatal(err)
	}
	tbl, _ = cat.LoadTable(ctx, id)
	waitVerified(t, p.replica, "ns", "t", metadataVersion(tbl), 20*time.Second)
	if e, ok := entry(p.replica, "ns", "t"); !ok || e.Status != "OK" {
		t.Errorf("after the next append: %+v", e)
	}
}
