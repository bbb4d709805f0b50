package objects

import (
	"context"
	"strings"
	"testing"
)

// The heal scan removes exactly the blob files nothing references and no
// write owns, keeps a write's file in flight, and reports a referenced file
// that is gone; a dry run changes nothing.
func TestHealScan(t *testing.T) {
	ctx := context.Background()
	l := newLayer(t)
	if err := l.CreateBucket(ctx, "heal"); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("x", 100) // above the inline limit: a blob file
	put(t, l, "heal", "kept", body)
	lost := put(t, l, "heal", "lost", body)
	up, err := l.CreateMultipartUpload(ctx, "heal", "big", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.UploadPart(ctx, "heal", "big", up.UploadID, 1, strings.NewReader(body), PutOptions{Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
	newBlob := func() string {
		w, err := l.blobs.Create()
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("orphaned bytes"))
		id, err := w.Commit()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	orphan := newBlob()
	inFlight := newBlob()
	batch := l.meta.NewBatch()
	batch.Set(intentKey(inFlight), nil)
	if err := batch.Commit(true); err != nil {
		t.Fatal(err)
	}
	if err := l.blobs.Remove(lost.Segments[0].BlobID); err != nil {
		t.Fatal(err)
	}

	dry, err := l.HealScan(ctx, HealOptions{DryRun: true, RecordsPerSecond: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if dry.BlobFiles != 4 || dry.Orphans != 1 || dry.OrphanBytes != 14 || dry.InFlight != 1 || dry.Removed != 0 ||
		dry.MissingCount != 1 || dry.Versions != 2 || dry.Parts != 1 || dry.Checked != 3 {
		t.Fatalf("dry run = %+v", dry)
	}
	if p := l.HealProgress(); !p.Done || p.Percent() != 100 || p.Checked != 3 {
		t.Fatalf("progress after the scan = %+v", p)
	}
	if m := dry.Missing[0]; m.Bucket != "heal" || m.Key != "lost" || m.VersionID != lost.VersionID || m.BlobID != lost.Segments[0].BlobID {
		t.Errorf("missing = %+v", m)
	}
	if !l.blobExists(orphan) {
		t.Fatal("a dry run removed the orphan")
	}

	rep, err := l.HealScan(ctx, HealOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Orphans != 1 || rep.Removed != 1 || rep.InFlight != 1 || rep.MissingCount != 1 {
		t.Fatalf("heal = %+v", rep)
	}
	if l.blobExists(orphan) || !l.blobExists(inFlight) {
		t.Errorf("after heal: orphan there %v, in-flight there %v", l.blobExists(orphan), l.blobExists(inFlight))
	}
	if got := read(t, l, "heal", "kept", ""); got != body {
		t.Errorf("kept object reads %q", got)
	}
	again, err := l.HealScan(ctx, HealOptions{})
	if err != nil || again.Orphans != 0 || again.Removed != 0 {
		t.Errorf("second heal = %+v, %v", again, err)
	}
}

// TestHealPercent: the estimate is the referenced blobs checked out of
// the blob files found, short of 100 until the scan is done.
func TestHealPercent(t *testing.T) {
	for _, tc := range []struct {
		p    HealProgress
		want int
	}{
		{HealProgress{}, 0},
		{HealProgress{HealReport: HealReport{BlobFiles: 200, Checked: 50}}, 25},
		{HealProgress{HealReport: HealReport{BlobFiles: 10, Checked: 10}}, 99}, // orphans may be left to look at
		{HealProgress{HealReport: HealReport{BlobFiles: 10, Checked: 12}}, 99}, // files written since the walk
		{HealProgress{Done: true}, 100},
	} {
		if got := tc.p.Percent(); got != tc.want {
			t.Errorf("%+v: %d%%, want %d%%", tc.p, got, tc.want)
		}
	}
}

func TestHealScanStopsWithItsContext(t *testing.T) {
	l := newLayer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.HealScan(ctx, HealOptions{RecordsPerSecond: 10}); err == nil {
		t.Error("a canceled scan reported success")
	}
}
