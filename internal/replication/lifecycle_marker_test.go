package replication

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/lifecycle"
	"github.com/twinlake/twinlake/internal/objects"
)

// TestExpiredMarkerRemovalNeverBringsBackWhatItHid: site b holds a
// version's expiry marker without the version (its copy lost here, as if
// not yet arrived) and its rules remove the marker, the key's only version
// there. At a, the marker still hides the version: a keeps it, whether the
// removal comes as b's purge or is sent again by b's mismatch detection
// (which remembers the purge's kind), and queues the key's versions for b
// again, oldest first; b takes the version, then the marker over it. a's
// rules then remove the version and the marker, and both sites end empty.
// Before, a applied the removal, the version became current again, and its
// expiry marker, once purged, was never made again: the expired version
// stayed on both sites for good.
func TestExpiredMarkerRemovalNeverBringsBackWhatItHid(t *testing.T) {
	a, b, ab, _ := fakePair(t, randomSeed(t), map[string]string{"mismatch_interval": "1h"})
	ctx := context.Background()
	const day = time.Second // a lifecycle day, counted without rounding
	if err := a.objects.CreateBucket(ctx, "bk1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error { _, err := b.objects.Bucket(ctx, "bk1"); return err })
	rules, err := lifecycle.Parse([]byte(`<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status>` +
		`<Expiration><Days>1</Days></Expiration><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays>` +
		`</NoncurrentVersionExpiration></Rule></LifecycleConfiguration>`))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*fakeSite{a, b} {
		s.objects.SetLifecycleDay(day)
		if err := s.objects.SetBucketLifecycle(ctx, "bk1", rules.Marshal()); err != nil {
			t.Fatal(err)
		}
	}
	versions := func(s *fakeSite) []*objects.Version {
		vs, err := s.objects.KeyVersions(ctx, "bk1", "k")
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	backlog := func(s *fakeSite) int64 {
		var n int64
		for _, tg := range *s.engine.targets.Load() {
			p, r := tg.snapshot()
			n += p.n + r.n
		}
		return n
	}
	drained := func() error {
		for _, s := range []*fakeSite{a, b} {
			if n := backlog(s); n > 0 {
				return fmt.Errorf("%s: %d to send", s.id, n)
			}
		}
		return nil
	}
	runLC := func(s *fakeSite, at int64) {
		t.Helper()
		if _, err := s.objects.RunLifecycle(ctx, at, 0); err != nil {
			t.Fatal(err)
		}
	}

	v, err := a.objects.PutObject(ctx, "bk1", "k", strings.NewReader("data"), objects.PutOptions{Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		if len(versions(b)) != 1 {
			return fmt.Errorf("the version has not reached b")
		}
		return drained()
	})
	if err := b.objects.DiscardVersion(ctx, "bk1", "k", v.VersionID); err != nil {
		t.Fatal(err)
	}

	// a expires the version; its marker reaches b, alone there.
	runLC(a, v.ModTime+int64(day)*3/2)
	eventually(t, 10*time.Second, drained)
	if vs := versions(b); len(vs) != 1 || !vs[0].DeleteMarker {
		t.Fatalf("b holds %d versions, want the expiry marker alone", len(vs))
	}
	marker := versions(b)[0]
	check := func(when string) {
		t.Helper()
		if vs := versions(a); len(vs) != 2 || vs[0].VersionID != marker.VersionID {
			t.Fatalf("%s: a holds %d versions, want the marker over the version", when, len(vs))
		}
	}

	// a's link to b goes down, so that what a sends back waits. b's rules
	// remove the marker; a keeps it, and queues the key for b again.
	ab.set(faults{down: true})
	runLC(b, v.ModTime+3*int64(day))
	eventually(t, 10*time.Second, func() error {
		if n := backlog(b); n > 0 {
			return fmt.Errorf("b: %d to send", n)
		}
		if backlog(a) == 0 {
			return fmt.Errorf("a queued nothing for b")
		}
		return nil
	})
	if vs := versions(b); len(vs) != 0 {
		t.Fatalf("b kept %d versions", len(vs))
	}
	if _, how, ok := b.objects.PurgedAs("bk1", "k", marker.VersionID); !ok || how != objects.PurgeExpiredMarker {
		t.Fatalf("b remembers the marker's removal as %v (%t), want an expired marker's", how, ok)
	}
	check("after b's removal")
	// b's mismatch detection sends the removal again, as it was made.
	if _, err := b.engine.CheckMismatches(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		if n := backlog(b); n > 0 {
			return fmt.Errorf("b: %d to send", n)
		}
		return nil
	})
	check("after b's mismatch detection")

	// The link comes back: b takes the version, then the marker over it.
	ab.set(faults{})
	eventually(t, 10*time.Second, drained)
	check("after a's resend")
	if vs := versions(b); len(vs) != 2 || vs[0].VersionID != marker.VersionID || vs[1].VersionID != v.VersionID {
		t.Fatalf("b holds %d versions, want the marker over the version, as a", len(vs))
	}

	// a's rules remove the version, then the marker: both sites end empty.
	runLC(a, v.ModTime+6*int64(day))
	eventually(t, 10*time.Second, drained)
	for _, s := range []*fakeSite{a, b} {
		if vs := versions(s); len(vs) != 0 {
			t.Fatalf("%s kept %d versions", s.id, len(vs))
		}
	}
}
