package objects

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func putLocked(t *testing.T, l *Layer, bucket, key string, k Lock) *Version {
	t.Helper()
	v, err := l.PutObject(context.Background(), bucket, key, strings.NewReader("x"), PutOptions{Size: 1, Lock: k})
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return v
}

// TestLockedVersionRemovalPaths: every way a version leaves the layer
// (a DELETE naming it, with and without the governance bypass, a peer's
// purge) against every lock state.
func TestLockedVersionRemovalPaths(t *testing.T) {
	l := newLayer(t)
	ctx := context.Background()
	if err := l.CreateBucketWithLock(ctx, "worm"); err != nil {
		t.Fatal(err)
	}
	hour := time.Now().Add(time.Hour)
	short := Lock{Mode: LockCompliance, RetainUntil: time.Now().Add(50 * time.Millisecond)}
	type row struct {
		name                      string
		lock                      Lock
		delete, bypass, peerPurge bool // whether each removes the version
	}
	rows := []row{
		{"compliance", Lock{Mode: LockCompliance, RetainUntil: hour}, false, false, false},
		{"governance", Lock{Mode: LockGovernance, RetainUntil: hour}, false, true, true},
		{"legal hold", Lock{LegalHold: LegalHoldOn}, false, false, false},
		{"governance and legal hold", Lock{Mode: LockGovernance, RetainUntil: hour, LegalHold: LegalHoldOn}, false, false, false},
		{"expired compliance", short, true, true, true},
		{"legal hold off", Lock{LegalHold: LegalHoldOff}, true, true, true},
		{"none", Lock{}, true, true, true},
	}
	type made struct{ del, byp, purge *Version }
	vs := make([]made, len(rows))
	for i, r := range rows {
		vs[i] = made{putLocked(t, l, "worm", r.name+"/d", r.lock), putLocked(t, l, "worm", r.name+"/b", r.lock), putLocked(t, l, "worm", r.name+"/p", r.lock)}
	}
	time.Sleep(time.Until(short.RetainUntil) + 20*time.Millisecond)
	gone := func(key, id string) bool {
		_, err := l.Version(ctx, "worm", key, id)
		return errors.Is(err, ErrVersionNotFound)
	}
	for i, r := range rows {
		_, err := l.DeleteObject(ctx, "worm", r.name+"/d", vs[i].del.VersionID)
		if r.delete != (err == nil) || !r.delete && !errors.Is(err, ErrObjectLocked) || gone(r.name+"/d", vs[i].del.VersionID) != r.delete {
			t.Errorf("%s: delete: %v", r.name, err)
		}
		_, err = l.DeleteObjectWith(ctx, "worm", r.name+"/b", vs[i].byp.VersionID, DeleteOptions{BypassGovernance: true})
		if r.bypass != (err == nil) || gone(r.name+"/b", vs[i].byp.VersionID) != r.bypass {
			t.Errorf("%s: delete with bypass: %v", r.name, err)
		}
		out, err := l.ApplyPurge(ctx, "worm", r.name+"/p", vs[i].purge.VersionID, vs[i].purge.ModTime, PurgeVersion)
		if err != nil || (out == Applied) != r.peerPurge || gone(r.name+"/p", vs[i].purge.VersionID) != r.peerPurge {
			t.Errorf("%s: peer purge: %v %v", r.name, out, err)
		}
	}
	// A delete without a version ID adds a marker over a locked version.
	v := putLocked(t, l, "worm", "marked", Lock{Mode: LockCompliance, RetainUntil: hour})
	if res, err := l.DeleteObject(ctx, "worm", "marked", ""); err != nil || !res.DeleteMarker {
		t.Fatalf("delete marker over a locked version: %+v %v", res, err)
	}
	if gone("marked", v.VersionID) {
		t.Fatal("the locked version went with the marker")
	}
	if err := l.DeleteBucket(ctx, "worm"); !errors.Is(err, ErrBucketNotEmpty) {
		t.Fatalf("delete of a bucket holding locked versions: %v", err)
	}
	if err := l.SetVersioning(ctx, "worm", VersioningSuspended); !errors.Is(err, ErrLockBucketState) {
		t.Fatalf("suspend versioning with object lock: %v", err)
	}
}

// TestRetentionChanges: which retention changes are allowed, by the mode
// that runs and the bypass.
func TestRetentionChanges(t *testing.T) {
	now := time.Now()
	at := func(d time.Duration) time.Time { return now.Add(d) }
	for _, tc := range []struct {
		name   string
		cur    Lock
		to     Retention
		bypass bool
		ok     bool
	}{
		{"compliance extended", Lock{Mode: LockCompliance, RetainUntil: at(time.Hour)}, Retention{LockCompliance, at(2 * time.Hour)}, false, true},
		{"compliance same date", Lock{Mode: LockCompliance, RetainUntil: at(time.Hour)}, Retention{LockCompliance, at(time.Hour)}, false, true},
		{"compliance shortened", Lock{Mode: LockCompliance, RetainUntil: at(time.Hour)}, Retention{LockCompliance, at(time.Minute)}, true, false},
		{"compliance to governance", Lock{Mode: LockCompliance, RetainUntil: at(time.Hour)}, Retention{LockGovernance, at(2 * time.Hour)}, true, false},
		{"compliance removed", Lock{Mode: LockCompliance, RetainUntil: at(time.Hour)}, Retention{}, true, false},
		{"governance extended", Lock{Mode: LockGovernance, RetainUntil: at(time.Hour)}, Retention{LockGovernance, at(2 * time.Hour)}, false, true},
		{"governance shortened", Lock{Mode: LockGovernance, RetainUntil: at(time.Hour)}, Retention{LockGovernance, at(time.Minute)}, false, false},
		{"governance shortened with bypass", Lock{Mode: LockGovernance, RetainUntil: at(time.Hour)}, Retention{LockGovernance, at(time.Minute)}, true, true},
		{"governance to compliance", Lock{Mode: LockGovernance, RetainUntil: at(time.Hour)}, Retention{LockCompliance, at(time.Hour)}, false, false},
		{"governance to compliance with bypass", Lock{Mode: LockGovernance, RetainUntil: at(time.Hour)}, Retention{LockCompliance, at(time.Hour)}, true, true},
		{"governance removed with bypass", Lock{Mode: LockGovernance, RetainUntil: at(time.Hour)}, Retention{}, true, true},
		{"expired compliance removed", Lock{Mode: LockCompliance, RetainUntil: at(-time.Minute)}, Retention{}, false, true},
		{"none set", Lock{}, Retention{LockCompliance, at(time.Minute)}, false, true},
	} {
		v := &Version{}
		v.setLock(tc.cur)
		err := retentionChange(v, tc.to, now, tc.bypass)
		if tc.ok != (err == nil) || err != nil && !errors.Is(err, ErrObjectLocked) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestReplicaLockMerge: a peer's metadata change carries retention and
// legal hold changes, but never shortens a running compliance retention,
// never unsets a legal hold (a peer predating object lock sends none), and
// a peer's bucket record never turns object lock off.
func TestReplicaLockMerge(t *testing.T) {
	l := newLayer(t)
	hour, later := time.Now().Add(time.Hour).UnixNano(), time.Now().Add(2*time.Hour).UnixNano()
	for _, tc := range []struct {
		name          string
		cur, in, want Version
	}{
		{"extension", Version{LockMode: LockCompliance, RetainUntil: hour}, Version{LockMode: LockCompliance, RetainUntil: later}, Version{LockMode: LockCompliance, RetainUntil: later}},
		{"compliance shortened", Version{LockMode: LockCompliance, RetainUntil: later}, Version{LockMode: LockCompliance, RetainUntil: hour}, Version{LockMode: LockCompliance, RetainUntil: later}},
		{"compliance dropped", Version{LockMode: LockCompliance, RetainUntil: later, LegalHold: LegalHoldOn}, Version{LegalHold: LegalHoldOff}, Version{LockMode: LockCompliance, RetainUntil: later, LegalHold: LegalHoldOff}},
		{"governance shortened", Version{LockMode: LockGovernance, RetainUntil: later}, Version{LockMode: LockGovernance, RetainUntil: hour}, Version{LockMode: LockGovernance, RetainUntil: hour}},
		{"legal hold unset by an old peer", Version{LegalHold: LegalHoldOn}, Version{}, Version{LegalHold: LegalHoldOn}},
		{"legal hold cleared", Version{LegalHold: LegalHoldOn}, Version{LegalHold: LegalHoldOff}, Version{LegalHold: LegalHoldOff}},
	} {
		cur := tc.cur
		l.mergeReplicaLock(&cur, &tc.in)
		if cur.LockMode != tc.want.LockMode || cur.RetainUntil != tc.want.RetainUntil || cur.LegalHold != tc.want.LegalHold {
			t.Errorf("%s: got %s %d %s", tc.name, cur.LockMode, cur.RetainUntil, cur.LegalHold)
		}
	}

	cur := &Bucket{Name: "b", ObjectLock: &LockConfig{Mode: LockGovernance, Days: 1}, FieldTimes: map[string]int64{FieldObjectLock: 5}}
	merged, out := mergeBucket(cur, &Bucket{Name: "b", FieldTimes: map[string]int64{FieldObjectLock: 9}})
	if out != Applied || merged.ObjectLock == nil || *merged.ObjectLock != *cur.ObjectLock {
		t.Fatalf("a peer turned object lock off: %v %+v", out, merged)
	}
	merged, _ = mergeBucket(cur, &Bucket{Name: "b", ObjectLock: &LockConfig{Mode: LockCompliance, Years: 1}, FieldTimes: map[string]int64{FieldObjectLock: 9}})
	if merged.ObjectLock.Mode != LockCompliance || merged.ObjectLock.Years != 1 {
		t.Fatalf("a peer's newer default retention: %+v", merged.ObjectLock)
	}
}
