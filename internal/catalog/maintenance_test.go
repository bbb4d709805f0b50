package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/twinlake/twinlake/internal/objects"
)

// metadataWith builds v2 metadata with snapshots 1..n (each the child of
// the one before, snapshot i taken i hours after base), main at head, and
// the extra refs given as JSON members.
func metadataWith(t *testing.T, base time.Time, n int, head int, extraRefs string, extraSnaps string) table.Metadata {
	t.Helper()
	var snaps []string
	for i := 1; i <= n; i++ {
		parent := ""
		if i > 1 {
			parent = fmt.Sprintf(`"parent-snapshot-id": %d,`, i-1)
		}
		snaps = append(snaps, fmt.Sprintf(`{"snapshot-id": %d, %s "sequence-number": %d, "timestamp-ms": %d,
			"manifest-list": "s3://wh/t/metadata/snap-%d.avro", "summary": {"operation": "append"}, "schema-id": 0}`,
			i, parent, i, base.Add(time.Duration(i)*time.Hour).UnixMilli(), i))
	}
	if extraSnaps != "" {
		snaps = append(snaps, extraSnaps)
	}
	refs := fmt.Sprintf(`"main": {"snapshot-id": %d, "type": "branch"}`, head)
	if extraRefs != "" {
		refs += "," + extraRefs
	}
	doc := fmt.Sprintf(`{"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "s3://wh/t",
		"last-sequence-number": 100, "last-updated-ms": %d, "last-column-id": 1,
		"schemas": [{"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "x", "required": true, "type": "long"}]}],
		"current-schema-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "default-spec-id": 0,
		"last-partition-id": 999, "sort-orders": [{"order-id": 0, "fields": []}], "default-sort-order-id": 0,
		"properties": {}, "current-snapshot-id": %d, "snapshots": [%s], "refs": {%s}}`,
		base.Add(time.Duration(n)*time.Hour).UnixMilli(), head, strings.Join(snaps, ","), refs)
	md, err := table.ParseMetadataBytes([]byte(doc))
	if err != nil {
		t.Fatalf("parse metadata: %v\n%s", err, doc)
	}
	return md
}

func TestPlanExpiry(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := base.Add(10 * time.Hour) // snapshot i is 10-i hours old
	side := fmt.Sprintf(`{"snapshot-id": 50, "parent-snapshot-id": 2, "sequence-number": 50, "timestamp-ms": %d,
		"manifest-list": "s3://wh/t/metadata/snap-50.avro", "summary": {"operation": "append"}, "schema-id": 0}`, base.Add(3*time.Hour).UnixMilli())
	// Snapshot i is 10-i hours old; main's head is 9.
	for _, tc := range []struct {
		name       string
		refs       string
		extra      string
		maxAge     time.Duration
		retainLast int
		want       []int64
	}{
		{name: "retain last 3, all old", maxAge: time.Hour / 2, retainLast: 3, want: []int64{1, 2, 3, 4, 5, 6}},
		{name: "age keeps the young", maxAge: 4 * time.Hour, retainLast: 1, want: []int64{1, 2, 3, 4, 5}},
		{name: "age keeps more than retain", maxAge: 7 * time.Hour, retainLast: 1, want: []int64{1, 2}},
		{name: "tag keeps its snapshot", refs: `"v1": {"snapshot-id": 2, "type": "tag"}`, maxAge: time.Minute, retainLast: 2,
			want: []int64{1, 3, 4, 5, 6, 7}},
		{name: "branch keeps its history", refs: `"dev": {"snapshot-id": 50, "type": "branch"}`, extra: side,
			maxAge: time.Minute, retainLast: 3, want: []int64{3, 4, 5, 6}},
		{name: "ref's min-snapshots-to-keep wins", refs: `"dev": {"snapshot-id": 4, "type": "branch", "min-snapshots-to-keep": 4}`,
			maxAge: time.Minute, retainLast: 1, want: []int64{5, 6, 7, 8}},
		{name: "unreferenced young snapshot kept", extra: side, maxAge: 8 * time.Hour, retainLast: 1, want: []int64{1}},
		{name: "unreferenced old snapshot expires", extra: side, maxAge: time.Hour, retainLast: 1,
			want: []int64{1, 2, 3, 4, 5, 6, 7, 8, 50}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := metadataWith(t, base, 9, 9, tc.refs, tc.extra)
			plan := planExpiry(md, now, tc.maxAge, tc.retainLast)
			if !slices.Equal(plan.expire, tc.want) {
				t.Errorf("expire = %v, want %v", plan.expire, tc.want)
			}
			if plan.kept+len(plan.expire) != len(md.Snapshots()) {
				t.Errorf("kept %d + expired %d != %d snapshots", plan.kept, len(plan.expire), len(md.Snapshots()))
			}
		})
	}
}

func TestRefsUnchanged(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	md := metadataWith(t, base, 3, 3, "", "")
	req := refsUnchanged{uuid: md.TableUUID().String(), refs: refsOf(md)}
	if err := req.Validate(md); err != nil {
		t.Fatalf("same refs: %v", err)
	}
	for name, other := range map[string]table.Metadata{
		"main moved": metadataWith(t, base, 3, 2, "", ""),
		"tag added":  metadataWith(t, base, 3, 3, `"v1": {"snapshot-id": 1, "type": "tag"}`, ""),
	} {
		if err := req.Validate(other); err == nil {
			t.Errorf("%s: the requirement holds", name)
		}
	}
}

func TestResolvePolicy(t *testing.T) {
	ws := MaintenanceSettings{}
	for _, kv := range [][2]string{{"maintenance", "on"}, {"expire_older_than", "2d"}, {"retain_last", "5"}, {"orphans_older_than", "6h"}} {
		if known, err := ws.set(kv[0], kv[1]); !known || err != nil {
			t.Fatalf("set %s=%s: known=%t err=%v", kv[0], kv[1], known, err)
		}
	}
	p := resolvePolicy(ws, iceberg.Properties{})
	if !p.enabled || p.expireAge != 48*time.Hour || p.retainLast != 5 || !p.orphans || p.orphanAge != 6*time.Hour {
		t.Errorf("warehouse policy: %+v", p)
	}
	p = resolvePolicy(ws, iceberg.Properties{PropMaintenanceEnabled: "false", table.MaxSnapshotAgeMsKey: "60000",
		table.MinSnapshotsToKeepKey: "2", PropOrphansOlderThanMS: "off", table.GCEnabledKey: "false"})
	if p.enabled || p.expireAge != time.Minute || p.retainLast != 2 || p.orphans || !p.gcDisabled {
		t.Errorf("table properties over the warehouse: %+v", p)
	}
	if p := resolvePolicy(ws, iceberg.Properties{table.MaxSnapshotAgeMsKey: "0", table.MinSnapshotsToKeepKey: "-1"}); p.expireAge != 48*time.Hour || p.retainLast != 5 {
		t.Errorf("out-of-range properties must not apply: %+v", p)
	}
	for _, kv := range [][2]string{{"maintenance", "yes"}, {"expire_older_than", "0s"}, {"expire_older_than", "5y"},
		{"retain_last", "0"}, {"orphans_older_than", "3651d"}} {
		if known, err := ws.set(kv[0], kv[1]); !known || err == nil {
			t.Errorf("set %s=%s: known=%t err=%v, want refused", kv[0], kv[1], known, err)
		}
	}
	if known, _ := ws.set("nope", "1"); known {
		t.Error("unknown setting reported known")
	}
	def := resolvePolicy(MaintenanceSettings{}, iceberg.Properties{})
	if def.enabled || def.expireAge != DefaultExpireOlderThan || def.retainLast != 1 || def.orphanAge != DefaultOrphansOlderThan {
		t.Errorf("defaults: %+v", def)
	}
}

func TestRemovedMetadataFiles(t *testing.T) {
	prevJSON := `{"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "s3://wh/t",
		"last-sequence-number": 0, "last-updated-ms": 1, "last-column-id": 1,
		"schemas": [{"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "x", "required": true, "type": "long"}]}],
		"current-schema-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "default-spec-id": 0,
		"last-partition-id": 999, "sort-orders": [{"order-id": 0, "fields": []}], "default-sort-order-id": 0,
		"properties": {}, "metadata-log": [%s]}`
	entry := func(v int) string {
		return fmt.Sprintf(`{"metadata-file": "s3://wh/t/metadata/%05d.metadata.json", "timestamp-ms": %d}`, v, v)
	}
	prev, err := table.ParseMetadataBytes([]byte(fmt.Sprintf(prevJSON, entry(1)+","+entry(2))))
	if err != nil {
		t.Fatal(err)
	}
	next, err := table.ParseMetadataBytes([]byte(fmt.Sprintf(prevJSON, entry(2)+","+entry(3))))
	if err != nil {
		t.Fatal(err)
	}
	got := removedMetadataFiles("s3://wh/t/metadata/00003.metadata.json", prev, next, "s3://wh/t/metadata/00004.metadata.json")
	if !slices.Equal(got, []string{"s3://wh/t/metadata/00001.metadata.json"}) {
		t.Errorf("removed = %v", got)
	}
}

// addSnapshot commits to ns.t a snapshot with an empty manifest list (a
// real Avro file in the warehouse), made ago before now, as main's head.
func addSnapshot(t *testing.T, c *Catalog, obj *objects.Layer, tbl *Table, id int64, parent *int64, ago time.Duration) string {
	t.Helper()
	ctx := context.Background()
	var buf bytes.Buffer
	seq := id
	if err := iceberg.WriteManifestList(2, &buf, id, parent, &seq, 0, nil); err != nil {
		t.Fatal(err)
	}
	key := strings.TrimPrefix(tbl.Location, "s3://lake/") + fmt.Sprintf("/metadata/snap-%d.avro", id)
	if _, err := obj.PutObject(ctx, "lake", key, bytes.NewReader(buf.Bytes()), objects.PutOptions{Size: int64(buf.Len())}); err != nil {
		t.Fatal(err)
	}
	schemaID := 0
	snap := table.Snapshot{SnapshotID: id, ParentSnapshotID: parent, SequenceNumber: seq,
		TimestampMs: time.Now().Add(-ago).UnixMilli(), ManifestList: "s3://lake/" + key,
		Summary: &table.Summary{Operation: table.OpAppend}, SchemaID: &schemaID}
	_, err := c.CommitTable(ctx, "lake", TableCommit{Ident: Ident{Namespace: []string{"ns"}, Name: "t"}, Updates: []table.Update{
		table.NewAddSnapshotUpdate(&snap), table.NewSetSnapshotRefUpdate("main", id, table.BranchRef, 0, 0, 0)}})
	if err != nil {
		t.Fatalf("add snapshot %d: %v", id, err)
	}
	return key
}

// TestExpiryRetriesOnConflict: a commit that moves main between an
// expiry's plan and its commit fails the expiry's requirement; the expiry
// plans again on the new metadata and commits, and only the expired
// snapshots' manifest lists are deleted.
func TestExpiryRetriesOnConflict(t *testing.T) {
	c, obj := newTestCatalog(t)
	ctx := context.Background()
	id := Ident{Namespace: []string{"ns"}, Name: "t"}
	tbl, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: id, Schema: unitSchema})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	var parent *int64
	for i := int64(1); i <= 3; i++ {
		keys = append(keys, addSnapshot(t, c, obj, tbl, i, parent, 0))
		parent = &i
	}
	// Snapshots 1..3 are ten hours old by the catalog's clock.
	c.cfg.Now = func() time.Time { return time.Now().Add(10 * time.Hour) }
	c.beforeExpiryCommit = func(attempt int) {
		if attempt == 1 {
			three := int64(3)
			keys = append(keys, addSnapshot(t, c, obj, tbl, 4, &three, 0))
		}
	}
	res, err := c.MaintainTable(ctx, "lake", id, MaintenanceOptions{ExpireSnapshots: true, OlderThan: time.Hour, RetainLast: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.CommitAttempts != 2 || !slices.Equal(res.ExpiredIDs, []int64{1, 2, 3}) {
		t.Errorf("attempts %d, expired %v; want 2 attempts expiring 1, 2, 3", res.CommitAttempts, res.ExpiredIDs)
	}
	cur, err := c.LoadTable(ctx, "lake", id)
	if err != nil {
		t.Fatal(err)
	}
	md, err := table.ParseMetadataBytes(cur.MetadataJSON)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(md.Snapshots()); n != 1 || md.CurrentSnapshot().SnapshotID != 4 {
		t.Errorf("after expiry: %d snapshots, current %v", n, md.CurrentSnapshot())
	}
	for i, k := range keys {
		_, err := obj.HeadObject(ctx, "lake", k, "")
		if gone := errors.Is(err, objects.ErrObjectNotFound); gone != (i < 3) {
			t.Errorf("manifest list %s: gone=%t (err %v)", k, gone, err)
		}
	}
	if res.FilesRemoved != 3 {
		t.Errorf("removed %d files, want 3", res.FilesRemoved)
	}
}
