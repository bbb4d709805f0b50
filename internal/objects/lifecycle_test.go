package objects

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/lifecycle"
	"github.com/twinlake/twinlake/internal/meta"
)

const dayNS = int64(24 * time.Hour)

func setRules(t *testing.T, l *Layer, bucket, doc string) {
	t.Helper()
	c, err := lifecycle.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetBucketLifecycle(context.Background(), bucket, c.Marshal()); err != nil {
		t.Fatal(err)
	}
}

func runLC(t *testing.T, l *Layer, at int64) LifecycleStats {
	t.Helper()
	st, err := l.RunLifecycle(context.Background(), at, 0)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func keysOf(t *testing.T, l *Layer, bucket string) []string {
	t.Helper()
	res, err := l.ListObjects(context.Background(), bucket, ListOptions{MaxKeys: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range res.Objects {
		out = append(out, o.Key)
	}
	return out
}

// TestLifecycleExpiresOnlyWhatIsDue: a run evaluates the keys that are
// due, not the bucket: after the one-time rebuild that follows a rule
// change, a run at a time when 2 of 50 objects are due looks at those 2.
func TestLifecycleExpiresOnlyWhatIsDue(t *testing.T) {
	ctx := context.Background()
	l := newLayer(t)
	if err := l.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	for i := range 48 {
		put(t, l, "bkt", fmt.Sprintf("data/%02d", i), "x")
	}
	put(t, l, "bkt", "logs/a", "x")
	put(t, l, "bkt", "logs/b", "x")
	setRules(t, l, "bkt", `<LifecycleConfiguration><Rule><ID>logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`)
	now := time.Now().UnixNano()
	if st := runLC(t, l, now); st.Indexed != 50 || st.Expired != 0 {
		t.Fatalf("rebuild: %+v", st)
	}
	if st := runLC(t, l, now); st.Keys != 0 {
		t.Fatalf("a second run with nothing due evaluated %d keys", st.Keys)
	}
	st := runLC(t, l, now+3*dayNS)
	if st.Keys != 2 || st.Expired != 2 {
		t.Fatalf("due run: %+v, want 2 keys evaluated and 2 expired", st)
	}
	if got := keysOf(t, l, "bkt"); len(got) != 48 || strings.HasPrefix(got[0], "logs/") {
		t.Fatalf("left %d keys: %v", len(got), got)
	}
	// A write after the rules were set is indexed by its own commit.
	put(t, l, "bkt", "logs/c", "x")
	if st := runLC(t, l, now+dayNS/2); st.Keys != 0 {
		t.Fatalf("a fresh object was evaluated early: %+v", st)
	}
	if st := runLC(t, l, time.Now().UnixNano()+3*dayNS); st.Keys != 1 || st.Expired != 1 {
		t.Fatalf("fresh object: %+v", st)
	}
}

// TestLifecycleVersioned: on a versioned bucket, an expired current
// version gets a delete marker, noncurrent versions go after their days
// keeping the newest ones asked for, and an expired delete marker left
// alone is removed, so the key disappears.
func TestLifecycleVersioned(t *testing.T) {
	ctx := context.Background()
	l := newLayer(t)
	if err := l.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	if err := l.SetVersioning(ctx, "bkt", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		put(t, l, "bkt", "k", fmt.Sprint(i))
	}
	setRules(t, l, "bkt", `<LifecycleConfiguration><Rule><ID>r</ID><Filter></Filter><Status>Enabled</Status>
<Expiration><Days>2</Days></Expiration>
<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>1</NewerNoncurrentVersions></NoncurrentVersionExpiration>
</Rule></LifecycleConfiguration>`)
	now := time.Now().UnixNano()
	// Days count to the next midnight UTC: the noncurrent versions are
	// due at the midnight after a day has passed, the current one a day
	// later, whatever the time of day the test runs.
	st := runLC(t, l, lifecycle.DueDays(now, 1, 24*time.Hour)) // noncurrent ones due, current not yet
	if st.Purged != 2 || st.Expired != 0 {
		t.Fatalf("first run: %+v", st)
	}
	vs, _ := l.KeyVersions(ctx, "bkt", "k")
	if len(vs) != 2 {
		t.Fatalf("%d versions left, want the current and 1 noncurrent", len(vs))
	}
	cur := vs[0]
	st = runLC(t, l, now+3*dayNS)
	if st.Expired != 1 {
		t.Fatalf("expiry run: %+v", st)
	}
	vs, _ = l.KeyVersions(ctx, "bkt", "k")
	if !vs[0].DeleteMarker || vs[0].VersionID != expiryMarkerID("bkt", "k", cur.VersionID) || vs[0].Origin != cur.Origin {
		t.Fatalf("marker %+v", vs[0])
	}
	if _, err := l.HeadObject(ctx, "bkt", "k", ""); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("expired object still readable: %v", err)
	}
	// The expired version is now the newest noncurrent one: kept.
	runLC(t, l, now+9*dayNS)
	if vs, _ := l.KeyVersions(ctx, "bkt", "k"); len(vs) != 2 {
		t.Fatalf("%d versions, want the marker and the newest noncurrent version", len(vs))
	}
	// Without NewerNoncurrentVersions it goes, then the marker left alone.
	setRules(t, l, "bkt", `<LifecycleConfiguration><Rule><ID>r</ID><Filter></Filter><Status>Enabled</Status>
<Expiration><Days>2</Days></Expiration>
<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration>
</Rule></LifecycleConfiguration>`)
	runLC(t, l, now+9*dayNS)
	runLC(t, l, now+12*dayNS)
	if vs, _ := l.KeyVersions(ctx, "bkt", "k"); len(vs) != 0 {
		t.Fatalf("versions left: %d (first %+v)", len(vs), vs[0])
	}
}

// TestLifecycleMarkerIsTheSameOnEverySite: two sites holding the same
// version expire it to the same delete marker, so replication finds a
// duplicate rather than two markers.
func TestLifecycleMarkerIsTheSameOnEverySite(t *testing.T) {
	ctx := context.Background()
	a, b := newLayer(t), newLayer(t)
	for _, l := range []*Layer{a, b} {
		if err := l.CreateBucket(ctx, "bkt"); err != nil {
			t.Fatal(err)
		}
		if err := l.SetVersioning(ctx, "bkt", VersioningEnabled); err != nil {
			t.Fatal(err)
		}
	}
	v := put(t, a, "bkt", "k", "data")
	if _, err := b.ApplyReplica(ctx, "bkt", "k", sent(v), strings.NewReader("data")); err != nil {
		t.Fatal(err)
	}
	rules := `<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`
	setRules(t, a, "bkt", rules)
	setRules(t, b, "bkt", rules)
	later := time.Now().UnixNano() + 3*dayNS
	runLC(t, a, later)
	runLC(t, b, later+int64(time.Hour)) // another site, another moment
	ma, _ := a.KeyVersions(ctx, "bkt", "k")
	mb, _ := b.KeyVersions(ctx, "bkt", "k")
	if len(ma) != 2 || len(mb) != 2 {
		t.Fatalf("versions: %d and %d", len(ma), len(mb))
	}
	if ma[0].VersionID != mb[0].VersionID || ma[0].ModTime != mb[0].ModTime || ma[0].Origin != mb[0].Origin {
		t.Fatalf("markers differ: %+v vs %+v", ma[0], mb[0])
	}
	if out, err := b.ApplyReplica(ctx, "bkt", "k", sent(ma[0]), strings.NewReader("")); err != nil || out != Duplicate {
		t.Fatalf("the peer's marker: %v %v, want a duplicate", out, err)
	}
}

// TestLifecycleAbortsUploadsAndKeepsLocked: incomplete uploads are aborted
// after their days; a noncurrent version under legal hold is kept.
func TestLifecycleAbortsUploadsAndKeepsLocked(t *testing.T) {
	ctx := context.Background()
	l := newLayer(t)
	if err := l.CreateBucketWithLock(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	setRules(t, l, "bkt", `<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status>
<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration>
<AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>
</Rule></LifecycleConfiguration>`)
	runLC(t, l, time.Now().UnixNano())
	u, err := l.CreateMultipartUpload(ctx, "bkt", "up", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	held, err := l.PutObject(ctx, "bkt", "k", strings.NewReader("1"), PutOptions{Size: 1, Lock: Lock{LegalHold: LegalHoldOn}})
	if err != nil {
		t.Fatal(err)
	}
	put(t, l, "bkt", "k", "2")
	st := runLC(t, l, time.Now().UnixNano()+3*dayNS)
	if st.Aborted != 1 || st.Purged != 0 {
		t.Fatalf("run: %+v", st)
	}
	if _, err := l.GetUpload(ctx, "bkt", "up", u.UploadID); !errors.Is(err, ErrUploadNotFound) {
		t.Fatalf("upload still there: %v", err)
	}
	if _, err := l.Version(ctx, "bkt", "k", held.VersionID); err != nil {
		t.Fatalf("held version removed: %v", err)
	}
	// Lifting the hold is a change to the key: the version goes next run.
	if _, err := l.SetObjectLegalHold(ctx, "bkt", "k", held.VersionID, false); err != nil {
		t.Fatal(err)
	}
	if st := runLC(t, l, time.Now().UnixNano()+3*dayNS); st.Purged != 1 {
		t.Fatalf("after the hold: %+v", st)
	}
}

// TestLifecycleRemovedRulesStop: removing the configuration drops the
// bucket's due index; nothing is expired afterwards.
func TestLifecycleRemovedRulesStop(t *testing.T) {
	ctx := context.Background()
	l := newLayer(t)
	if err := l.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	setRules(t, l, "bkt", `<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`)
	put(t, l, "bkt", "k", "x")
	if err := l.SetBucketLifecycle(ctx, "bkt", nil); err != nil {
		t.Fatal(err)
	}
	if st := runLC(t, l, time.Now().UnixNano()+3*dayNS); st.Keys != 0 {
		t.Fatalf("run without rules: %+v", st)
	}
	if empty, _ := l.rangeEmpty(duePrefix("bkt")); !empty {
		t.Fatal("due index left behind")
	}
}

// purgeRecorder is a Replicator that keeps the purges a layer reports.
type purgeRecorder struct {
	replicating
	purges []recordedPurge
}

type recordedPurge struct {
	v   Version
	how PurgeKind
}

func (r *purgeRecorder) Purge(_ meta.Batch, _, _ string, v *Version, how PurgeKind) {
	r.purges = append(r.purges, recordedPurge{*v, how})
}

// take returns the purges recorded since the last call.
func (r *purgeRecorder) take() []recordedPurge {
	p := r.purges
	r.purges = nil
	return p
}

// lcDay is the lifecycle day of expiryPair's layers, counted without
// rounding.
const lcDay = int64(time.Second)

// expiryPair returns two layers as two replicating sites, each with a
// versioned bucket "bkt" under rules and a purgeRecorder for a replicator.
func expiryPair(t *testing.T, rules string) (a, c *Layer, ra, rc *purgeRecorder) {
	t.Helper()
	a, c = newLayer(t), newLayer(t)
	ra, rc = &purgeRecorder{}, &purgeRecorder{}
	a.SetReplicator(ra)
	c.SetReplicator(rc)
	for _, l := range []*Layer{a, c} {
		l.SetLifecycleDay(time.Duration(lcDay))
		if err := l.CreateBucket(context.Background(), "bkt"); err != nil {
			t.Fatal(err)
		}
		if err := l.SetVersioning(context.Background(), "bkt", VersioningEnabled); err != nil {
			t.Fatal(err)
		}
		setRules(t, l, "bkt", rules)
	}
	return a, c, ra, rc
}

// putExpired puts key on l and runs its rules a lifecycle day and a half
// later: it returns the version and the expiry marker now over it.
func putExpired(t *testing.T, l *Layer, key string) (v, marker *Version) {
	t.Helper()
	v = put(t, l, "bkt", key, "data")
	runLC(t, l, v.ModTime+lcDay+lcDay/2)
	vs, err := l.KeyVersions(context.Background(), "bkt", key)
	if err != nil || len(vs) != 2 || !vs[0].DeleteMarker {
		t.Fatalf("%s after the expiry: %d versions (%v), want the marker over the version", key, len(vs), err)
	}
	return v, vs[0]
}

// sent is v as a peer sends it: without its replication targets.
func sent(v *Version) *Version {
	in := *v
	in.Targets = nil
	return &in
}

// TestLifecycleExpiredMarkerRemovalKeepsWhatItHidesElsewhere: a site that
// got a version's expiry marker before the version (its send was retried
// later) removes the marker as the key's only version, an expired object
// delete marker. At the version's origin the marker still hides the
// version: the removal reaches it as such, and it keeps the marker rather
// than bring the version back (whose expiry marker, once removed, is never
// made again). The origin's rules then remove the version and the marker,
// and every site ends empty. A plain purge of the marker (a user undoing
// the expiry) still restores the version, for good.
func TestLifecycleExpiredMarkerRemovalKeepsWhatItHidesElsewhere(t *testing.T) {
	ctx := context.Background()
	a, c, ra, rc := expiryPair(t, `<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>`+
		`<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration></Rule></LifecycleConfiguration>`)
	const day = lcDay
	ids := func(l *Layer, key string) []string {
		vs, err := l.KeyVersions(ctx, "bkt", key)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, v := range vs {
			out = append(out, v.VersionID)
		}
		return out
	}

	v, marker := putExpired(t, a, "k") // a: the marker, over the version
	expiry := v.ModTime + day + day/2

	// c gets the marker first, and removes it as an expired object
	// delete marker.
	if _, err := c.ApplyReplica(ctx, "bkt", "k", sent(marker), strings.NewReader("")); err != nil {
		t.Fatal(err)
	}
	runLC(t, c, expiry+day)
	if got := ids(c, "k"); len(got) != 0 {
		t.Fatalf("c kept %v", got)
	}
	reported := rc.take()
	if len(reported) != 1 || reported[0].v.VersionID != marker.VersionID || reported[0].how != PurgeExpiredMarker {
		t.Fatalf("c reported %+v, want the marker's removal as an expired marker's", reported)
	}

	// At a, the marker hides the version: it stays.
	out, err := a.ApplyPurge(ctx, "bkt", "k", marker.VersionID, marker.ModTime, PurgeExpiredMarker)
	if err != nil || out != Stale {
		t.Fatalf("a applying c's removal: %v %v, want stale", out, err)
	}
	if got := ids(a, "k"); len(got) != 2 {
		t.Fatalf("a after c's removal: %v", got)
	}
	// The version reaches c late.
	if _, err := c.ApplyReplica(ctx, "bkt", "k", sent(v), strings.NewReader("data")); err != nil {
		t.Fatal(err)
	}

	// a's rules remove the version, then the marker; c applies both.
	runLC(t, a, v.ModTime+4*day)
	if got := ids(a, "k"); len(got) != 0 {
		t.Fatalf("a kept %v", got)
	}
	for _, p := range ra.take() {
		if _, err := c.ApplyPurge(ctx, "bkt", "k", p.v.VersionID, p.v.ModTime, p.how); err != nil {
			t.Fatal(err)
		}
	}
	if got := ids(c, "k"); len(got) != 0 {
		t.Fatalf("c kept %v after a's purges", got)
	}

	// A user's purge of an expiry marker restores what it hid, and the
	// rules do not expire it again.
	w, wMarker := putExpired(t, a, "u")
	if out, err := c.ApplyReplica(ctx, "bkt", "u", sent(w), strings.NewReader("data")); err != nil || out != Applied {
		t.Fatal(out, err)
	}
	if out, err := c.ApplyReplica(ctx, "bkt", "u", sent(wMarker), strings.NewReader("")); err != nil || out != Applied {
		t.Fatal(out, err)
	}
	if _, err := a.DeleteObject(ctx, "bkt", "u", wMarker.VersionID); err != nil {
		t.Fatal(err)
	}
	for _, p := range ra.take() {
		if p.how != PurgeVersion {
			t.Fatalf("a user's purge reported as %v", p.how)
		}
		if out, err := c.ApplyPurge(ctx, "bkt", "u", p.v.VersionID, p.v.ModTime, p.how); err != nil || out != Applied {
			t.Fatalf("c applying the user's purge: %v %v", out, err)
		}
	}
	for _, l := range []*Layer{a, c} {
		runLC(t, l, w.ModTime+10*day)
		if got := ids(l, "u"); len(got) != 1 || got[0] != w.VersionID {
			t.Fatalf("after the user restored it: %v, want the version alone", got)
		}
	}
}

// TestLifecycleMarkerRemovedAloneIsMadeAgain: with rules that keep
// noncurrent versions, a site that removed a version's expiry marker as
// the key's only version, and got the version after, makes the marker
// again when the rules expire it, rather than show the version its peer
// hides for good. A marker a user purged is not made again.
func TestLifecycleMarkerRemovedAloneIsMadeAgain(t *testing.T) {
	ctx := context.Background()
	a, c, _, _ := expiryPair(t, `<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`)
	const day = lcDay
	listing := func(l *Layer) string {
		vs, err := l.KeyVersions(ctx, "bkt", "k")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, v := range vs {
			ids = append(ids, fmt.Sprintf("%s dm=%t", v.VersionID, v.DeleteMarker))
		}
		return strings.Join(ids, ", ")
	}
	v, marker := putExpired(t, a, "k")
	// c gets the marker alone and removes it; a keeps its own.
	if _, err := c.ApplyReplica(ctx, "bkt", "k", sent(marker), strings.NewReader("")); err != nil {
		t.Fatal(err)
	}
	runLC(t, c, v.ModTime+3*day)
	if got := listing(c); got != "" {
		t.Fatalf("c kept %s", got)
	}
	if out, err := a.ApplyPurge(ctx, "bkt", "k", marker.VersionID, marker.ModTime, PurgeExpiredMarker); err != nil || out != Stale {
		t.Fatalf("a applying c's removal: %v %v", out, err)
	}
	// The version reaches c; c's rules expire it with the same marker.
	if _, err := c.ApplyReplica(ctx, "bkt", "k", sent(v), strings.NewReader("data")); err != nil {
		t.Fatal(err)
	}
	runLC(t, c, v.ModTime+4*day)
	if got, want := listing(c), listing(a); got != want {
		t.Fatalf("c holds %q, a %q", got, want)
	}

	// A user's purge of the marker restores the version, for good.
	if _, err := c.DeleteObject(ctx, "bkt", "k", marker.VersionID); err != nil {
		t.Fatal(err)
	}
	runLC(t, c, v.ModTime+8*day)
	if got := listing(c); got != v.VersionID+" dm=false" {
		t.Fatalf("c after the user's purge of the marker: %s", got)
	}
}

// TestRemovedExpiredMarkerIsTakenAgainOnceItHides: a site that removed an
// expired object delete marker as the key's only version refuses a late
// copy of it while it would stand alone again, and takes it once the
// version it hides has arrived (the peer that sent it hides that version
// behind it), whether or not this site's rules run before.
func TestRemovedExpiredMarkerIsTakenAgainOnceItHides(t *testing.T) {
	ctx := context.Background()
	a, c, _, _ := expiryPair(t, `<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`)
	const day = lcDay
	v, marker := putExpired(t, a, "k")
	if _, err := c.ApplyReplica(ctx, "bkt", "k", sent(marker), strings.NewReader("")); err != nil {
		t.Fatal(err)
	}
	runLC(t, c, v.ModTime+3*day)
	// Alone, the marker's copy is refused; the rules are removed, so
	// nothing but the copy can bring it back.
	if err := c.SetBucketLifecycle(ctx, "bkt", nil); err != nil {
		t.Fatal(err)
	}
	if out, err := c.ApplyReplica(ctx, "bkt", "k", sent(marker), strings.NewReader("")); err != nil || out != Stale {
		t.Fatalf("the marker's copy, alone here: %v %v, want stale", out, err)
	}
	if out, err := c.ApplyReplica(ctx, "bkt", "k", sent(v), strings.NewReader("data")); err != nil || out != Applied {
		t.Fatalf("the version: %v %v", out, err)
	}
	if out, err := c.ApplyReplica(ctx, "bkt", "k", sent(marker), strings.NewReader("")); err != nil || out != Applied {
		t.Fatalf("the marker's copy over the version: %v %v, want applied", out, err)
	}
	got, _ := c.KeyVersions(ctx, "bkt", "k")
	if len(got) != 2 || got[0].VersionID != marker.VersionID || got[1].VersionID != v.VersionID {
		t.Fatalf("c holds %d versions, want the marker over the version as a does", len(got))
	}
}

// TestLifecycleRunOfManyBatches: a run with more keys due than one batch
// takes reads each batch on from where the last stopped, and expires every
// due object exactly once, evaluating each key once.
func TestLifecycleRunOfManyBatches(t *testing.T) {
	ctx := context.Background()
	l := newLayer(t)
	if err := l.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	const n = 2*lifecycleBatch + 500
	for i := range n {
		put(t, l, "bkt", fmt.Sprintf("k%05d", i), "x")
	}
	setRules(t, l, "bkt", `<LifecycleConfiguration><Rule><ID>all</ID><Filter><Prefix></Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`)
	now := time.Now().UnixNano()
	if st := runLC(t, l, now); st.Indexed != n || st.Expired != 0 {
		t.Fatalf("rebuild: %+v", st)
	}
	st := runLC(t, l, now+3*dayNS)
	if st.Keys != n || st.Expired != n {
		t.Fatalf("run: %+v, want %d keys evaluated and expired", st, n)
	}
	if got := keysOf(t, l, "bkt"); len(got) != 0 {
		t.Fatalf("%d keys left, first %s", len(got), got[0])
	}
	p := duePrefix("bkt")
	left := 0
	if err := meta.Scan(l.meta, p, meta.PrefixEnd(p), func(_, _ []byte) (bool, error) { left++; return true, nil }); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d index entries left", left)
	}
}
