package replication_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/testsite"
)

// TestObjectLockReplicates: a bucket created with object lock on one site
// has it on the other, with its default retention; a version's retention
// and legal hold travel with it and their changes follow as metadata
// changes; the DR copy is just as immutable: a delete of the locked version
// there is refused, and neither a peer's purge of a version under legal
// hold or compliance retention nor a peer's attempt to shorten a
// compliance retention changes the copy.
func TestObjectLockReplicates(t *testing.T) {
	m := testsite.StartMesh(t, 2, fastRetries, nil)
	cs := clients(t, m)
	ctx := context.Background()
	if err := cs[0].MakeBucket(ctx, "worm", minio.MakeBucketOptions{ObjectLocking: true}); err != nil {
		t.Fatal(err)
	}
	gov, days := minio.Governance, uint(3)
	unit := minio.Days
	if err := cs[0].SetObjectLockConfig(ctx, "worm", &gov, &days, &unit); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error {
		enabled, mode, validity, u, err := cs[1].GetObjectLockConfig(ctx, "worm")
		if err != nil || enabled != "Enabled" || mode == nil || *mode != minio.Governance || validity == nil || *validity != 3 || u == nil || *u != minio.Days {
			return fmt.Errorf("site2 lock configuration %q %v %v %v %v", enabled, mode, validity, u, err)
		}
		return nil
	})

	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	comp := minio.Compliance
	c, err := cs[0].PutObject(ctx, "worm", "comp", strings.NewReader("c"), 1, minio.PutObjectOptions{Mode: comp, RetainUntilDate: until})
	if err != nil {
		t.Fatal(err)
	}
	h, err := cs[0].PutObject(ctx, "worm", "held", strings.NewReader("h"), 1, minio.PutObjectOptions{LegalHold: minio.LegalHoldEnabled})
	if err != nil {
		t.Fatal(err)
	}
	retention := func(site int, key, id string) (string, time.Time, error) {
		mode, u, err := cs[site].GetObjectRetention(ctx, "worm", key, id)
		if err != nil || mode == nil || u == nil {
			return "", time.Time{}, fmt.Errorf("site%d retention of %s: %v", site+1, key, err)
		}
		return string(*mode), u.UTC(), nil
	}
	testsite.Eventually(t, 20*time.Second, func() error {
		if mode, u, err := retention(1, "comp", c.VersionID); err != nil || mode != "COMPLIANCE" || !u.Equal(until) {
			return fmt.Errorf("site2 comp: %s %v %v", mode, u, err)
		}
		if mode, _, err := retention(1, "held", h.VersionID); err != nil || mode != "GOVERNANCE" {
			return fmt.Errorf("site2 held default retention: %s %v", mode, err)
		}
		if st, err := cs[1].GetObjectLegalHold(ctx, "worm", "held", minio.GetObjectLegalHoldOptions{VersionID: h.VersionID}); err != nil || st == nil || *st != minio.LegalHoldEnabled {
			return fmt.Errorf("site2 legal hold: %v %v", st, err)
		}
		return nil
	})

	// The DR copy refuses deletes of the locked versions.
	for _, tc := range []struct{ key, id string }{{"comp", c.VersionID}, {"held", h.VersionID}} {
		err := cs[1].RemoveObject(ctx, "worm", tc.key, minio.RemoveObjectOptions{VersionID: tc.id, GovernanceBypass: true})
		if minio.ToErrorResponse(err).Code != "AccessDenied" {
			t.Fatalf("site2 delete of locked %s: %v", tc.key, err)
		}
	}

	// Changes of retention and legal hold replicate as metadata changes.
	later := until.Add(24 * time.Hour)
	if err := cs[0].PutObjectRetention(ctx, "worm", "comp", minio.PutObjectRetentionOptions{VersionID: c.VersionID, Mode: &comp, RetainUntilDate: &later}); err != nil {
		t.Fatal(err)
	}
	off := minio.LegalHoldDisabled
	if err := cs[0].PutObjectLegalHold(ctx, "worm", "held", minio.PutObjectLegalHoldOptions{VersionID: h.VersionID, Status: &off}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 20*time.Second, func() error {
		if mode, u, err := retention(1, "comp", c.VersionID); err != nil || mode != "COMPLIANCE" || !u.Equal(later) {
			return fmt.Errorf("site2 comp after extension: %s %v %v", mode, u, err)
		}
		if st, err := cs[1].GetObjectLegalHold(ctx, "worm", "held", minio.GetObjectLegalHoldOptions{VersionID: h.VersionID}); err != nil || st == nil || *st != minio.LegalHoldDisabled {
			return fmt.Errorf("site2 legal hold after clearing: %v %v", st, err)
		}
		return nil
	})

	// A peer's purge of a version under compliance retention, and a peer's
	// metadata change that would shorten it, leave the copy as it is.
	ol := m.Sites[1].Server().Objects()
	out, err := ol.ApplyPurge(ctx, "worm", "comp", c.VersionID, 0, objects.PurgeVersion)
	if err != nil || out != objects.Stale {
		t.Fatalf("peer purge of a compliance version: %v %v", out, err)
	}
	v, err := ol.Version(ctx, "worm", "comp", c.VersionID)
	if err != nil {
		t.Fatalf("the compliance version is gone from site2: %v", err)
	}
	weaker := *v
	weaker.RetainUntil, weaker.MetaTime, weaker.Origin = time.Now().Add(time.Minute).UnixNano(), v.MetaTime+1, v.Origin
	weaker.Segments = nil
	if _, err := ol.ApplyReplica(ctx, "worm", "comp", &weaker, strings.NewReader("")); err != nil {
		t.Fatal(err)
	}
	if mode, u, err := retention(1, "comp", c.VersionID); err != nil || mode != "COMPLIANCE" || !u.Equal(later) {
		t.Fatalf("a peer shortened a compliance retention: %s %v %v", mode, u, err)
	}

	// A governance version removed at its origin with the bypass (the
	// origin checked s3:BypassGovernanceRetention) goes from the peer too.
	g, err := cs[0].PutObject(ctx, "worm", "gov", strings.NewReader("g"), 1, minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 20*time.Second, func() error {
		_, err := cs[1].StatObject(ctx, "worm", "gov", minio.StatObjectOptions{VersionID: g.VersionID})
		return err
	})
	if err := cs[0].RemoveObject(ctx, "worm", "gov", minio.RemoveObjectOptions{VersionID: g.VersionID}); minio.ToErrorResponse(err).Code != "AccessDenied" {
		t.Fatalf("delete under the default governance retention: %v", err)
	}
	if err := cs[0].RemoveObject(ctx, "worm", "gov", minio.RemoveObjectOptions{VersionID: g.VersionID, GovernanceBypass: true}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 20*time.Second, func() error {
		if _, err := cs[1].StatObject(ctx, "worm", "gov", minio.StatObjectOptions{VersionID: g.VersionID}); minio.ToErrorResponse(err).StatusCode != 404 {
			return fmt.Errorf("site2 still has the removed governance version: %v", err)
		}
		return nil
	})

	// The bucket holding them cannot be deleted on either site.
	for i, cl := range cs {
		if err := cl.RemoveBucket(ctx, "worm"); minio.ToErrorResponse(err).Code != "BucketNotEmpty" {
			t.Fatalf("site%d bucket delete: %v", i+1, err)
		}
	}
}
