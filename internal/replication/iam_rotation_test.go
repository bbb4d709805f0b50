package replication_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/app"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/testsite"
)

// TestIAMReplicationAcrossRootRotation: each site seals secrets under its
// own data key, so a root password change on one site (restarted with the
// previous one) leaves replication whole: users made before the change
// still sign there, and users made afterwards on either site reach the
// other and sign on both. Secrets travel opened and are sealed again by the
// receiver; nothing sealed by one site is ever opened by another. The
// site-replication service credential's secret is sealed the same way and
// survives the rotation too.
func TestIAMReplicationAcrossRootRotation(t *testing.T) {
	ctx := context.Background()
	m := testsite.StartMesh(t, 2, fastRetries, nil)
	s1, s2 := m.Sites[0], m.Sites[1]
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := client(t, s1.Site).MakeBucket(ctx, "team", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	a1 := admin(t, s1.Site)
	must(a1.AddUser(ctx, "before", "before-secret-1"))
	must(a1.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"readwrite"}, User: "before"}))
	testsite.Eventually(t, 20*time.Second, func() error { return canPut(s2.Site, t, "before", "before-secret-1", "team") })

	// The service credential's secret is not in the stored state: it is
	// sealed under the IAM data key beside it.
	s2.Stop()
	db, err := meta.OpenPebble(filepath.Join(s2.Dir, "meta"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := db.Get([]byte("r/state"))
	if err != nil {
		t.Fatal(err)
	}
	var stored map[string]any
	if err := msgpack.Unmarshal(raw, &stored); err != nil {
		t.Fatal(err)
	}
	if stored["ak"] == "" || stored["sk"] != nil && stored["sk"] != "" {
		t.Fatalf("stored replication state holds the service secret: %v", stored)
	}
	if sealed, err := db.Get([]byte("sys/sealed/replication/service-secret-key")); err != nil || len(sealed) < 28 {
		t.Fatalf("sealed service secret: %d bytes, %v", len(sealed), err)
	}
	db.Close()

	old := s2.SecretKey
	s2.RestartWith(testsite.WithApp(func(c *app.Config) {
		c.RootPassword, c.PreviousRootPasswords = "site2-rotated-root", []string{old}
	}))
	if s2.SecretKey != "site2-rotated-root" {
		t.Fatalf("site2 root secret %q", s2.SecretKey)
	}
	must(canPut(s2.Site, t, "before", "before-secret-1", "team"))

	a2 := admin(t, s2.Site)
	must(a1.AddUser(ctx, "made-on-1", "made-on-1-secret"))
	must(a1.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"readwrite"}, User: "made-on-1"}))
	must(a2.AddUser(ctx, "made-on-2", "made-on-2-secret"))
	must(a2.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"readwrite"}, User: "made-on-2"}))
	for _, s := range []*testsite.Member{s1, s2} {
		for user, secret := range map[string]string{"before": "before-secret-1", "made-on-1": "made-on-1-secret", "made-on-2": "made-on-2-secret"} {
			testsite.Eventually(t, 20*time.Second, func() error { return canPut(s.Site, t, user, secret, "team") })
		}
	}
	testsite.Eventually(t, 20*time.Second, func() error { return iamConverged(m) })
}
