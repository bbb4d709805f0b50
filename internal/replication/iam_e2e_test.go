package replication_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/replication"
	"github.com/twinlake/twinlake/internal/testsite"
)

func admin(t *testing.T, s *testsite.Site) *adminclient.Client {
	t.Helper()
	c, err := adminclient.New(s.URL, adminclient.Credentials{AccessKey: s.AccessKey, SecretKey: s.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func clientAs(t *testing.T, s *testsite.Site, ak, sk string) *minio.Client {
	t.Helper()
	u, _ := url.Parse(s.URL)
	c, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(ak, sk, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// canPut reports nil when ak/sk may write bucket/key on s, else why not.
func canPut(s *testsite.Site, t *testing.T, ak, sk, bucket string) error {
	_, err := clientAs(t, s, ak, sk).PutObject(context.Background(), bucket, "k", bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{})
	return err
}

func refused(code string, err error) error {
	if err == nil {
		return errors.New("allowed, want refused")
	}
	if got := minio.ToErrorResponse(err).Code; got != code {
		return fmt.Errorf("refused with %q (%v), want %s", got, err, code)
	}
	return nil
}

// iamConverged checks that every site reports the same IAM records as
// every other (admin replicate status's IAM digest comparison).
func iamConverged(m *testsite.Mesh) error {
	for _, s := range m.Sites {
		st, err := s.Server().Replication().Status(context.Background())
		if err != nil {
			return err
		}
		for name, same := range st.IAM {
			if !same {
				return fmt.Errorf("%s: IAM records differ from %s", s.Name, name)
			}
		}
		if len(st.IAM) != len(m.Sites) {
			return fmt.Errorf("%s compared IAM with %d sites", s.Name, len(st.IAM))
		}
	}
	return nil
}

func TestIAMReplication(t *testing.T) {
	ctx := context.Background()
	m := testsite.StartMesh(t, 3, fastRetries, nil)
	s1, s2, s3 := m.Sites[0], m.Sites[1], m.Sites[2]
	a1, a2, a3 := admin(t, s1.Site), admin(t, s2.Site), admin(t, s3.Site)
	root1 := client(t, s1.Site)
	for _, b := range []string{"team", "other"} {
		if err := root1.MakeBucket(ctx, b, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	doc := []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":["arn:aws:s3:::team","arn:aws:s3:::team/*"]}]}`)
	must(a1.CreatePolicy(ctx, "team-rw", doc))
	must(a1.AddUser(ctx, "alice", "alice-secret-1"))
	must(a1.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"team-rw"}, User: "alice"}))
	key, err := a1.CreateAccessKey(ctx, adminclient.AccessKeyCreateRequest{User: "alice", AccessKey: "alice-dashboard", SecretKey: "dashboard-secret"})
	must(err)

	t.Run("a user made on site1 signs on site2 with the same rights", func(t *testing.T) {
		testsite.Eventually(t, 20*time.Second, func() error { return canPut(s2.Site, t, "alice", "alice-secret-1", "team") })
		testsite.Eventually(t, 20*time.Second, func() error {
			return canPut(s2.Site, t, key.AccessKey, key.SecretKey, "team")
		})
		if err := refused("AccessDenied", canPut(s2.Site, t, "alice", "alice-secret-1", "other")); err != nil {
			t.Fatal(err)
		}
		if err := refused("SignatureDoesNotMatch", canPut(s3.Site, t, "alice", "wrong-secret", "team")); err != nil {
			testsite.Eventually(t, 20*time.Second, func() error {
				return refused("SignatureDoesNotMatch", canPut(s3.Site, t, "alice", "wrong-secret", "team"))
			})
		}
	})

	t.Run("disabled on site2 is refused on site1", func(t *testing.T) {
		must(a2.SetUserStatus(ctx, "alice", false))
		testsite.Eventually(t, 20*time.Second, func() error {
			return refused("InvalidAccessKeyId", canPut(s1.Site, t, "alice", "alice-secret-1", "team"))
		})
		must(a2.SetUserStatus(ctx, "alice", true))
		testsite.Eventually(t, 20*time.Second, func() error { return canPut(s1.Site, t, "alice", "alice-secret-1", "team") })
	})

	t.Run("a site that was down catches up", func(t *testing.T) {
		s3.Proxy.Cut()
		must(a1.AddUser(ctx, "bob", "bob-secret-1"))
		must(a1.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"team-rw"}, User: "bob"}))
		must(a2.RemoveAccessKey(ctx, key.AccessKey))
		time.Sleep(300 * time.Millisecond) // let the sends to site3 fail
		if err := canPut(s3.Site, t, key.AccessKey, key.SecretKey, "team"); err != nil {
			t.Fatalf("site3 changed while cut off: %v", err)
		}
		s3.Proxy.Restore()
		testsite.Eventually(t, 30*time.Second, func() error { return canPut(s3.Site, t, "bob", "bob-secret-1", "team") })
		testsite.Eventually(t, 30*time.Second, func() error {
			return refused("InvalidAccessKeyId", canPut(s3.Site, t, key.AccessKey, key.SecretKey, "team"))
		})
		testsite.Eventually(t, 30*time.Second, func() error { return iamConverged(m) })
	})

	cutAll := func() {
		for _, s := range m.Sites {
			s.Proxy.Cut()
		}
	}
	restoreAll := func() {
		for _, s := range m.Sites {
			s.Proxy.Restore()
		}
	}

	t.Run("concurrent changes converge by last writer", func(t *testing.T) {
		must(a1.AddUser(ctx, "carol", "carol-secret-1"))
		testsite.Eventually(t, 20*time.Second, func() error { return iamConverged(m) })
		cutAll()
		must(a1.SetUserStatus(ctx, "carol", false))
		time.Sleep(5 * time.Millisecond)
		must(a2.SetUserStatus(ctx, "carol", true)) // later: wins
		must(a2.SetUserStatus(ctx, "carol", false))
		time.Sleep(5 * time.Millisecond)
		must(a3.SetUserStatus(ctx, "carol", true)) // latest: wins
		restoreAll()
		testsite.Eventually(t, 30*time.Second, func() error { return iamConverged(m) })
		for i, a := range []*adminclient.Client{a1, a2, a3} {
			u, err := a.UserInfo(ctx, "carol")
			if err != nil || !u.Enabled {
				t.Fatalf("site%d: carol %+v, %v; want enabled (site3's later change)", i+1, u, err)
			}
		}
		// Enabled, without a policy: she signs, and is denied.
		if err := refused("AccessDenied", canPut(s1.Site, t, "carol", "carol-secret-1", "other")); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a late update does not resurrect a deleted user", func(t *testing.T) {
		must(a1.AddUser(ctx, "dave", "dave-secret-1"))
		testsite.Eventually(t, 20*time.Second, func() error { return iamConverged(m) })
		cutAll()
		must(a3.SetUserStatus(ctx, "dave", false)) // older than the delete
		time.Sleep(5 * time.Millisecond)
		must(a1.RemoveUser(ctx, "dave"))
		restoreAll()
		testsite.Eventually(t, 30*time.Second, func() error { return iamConverged(m) })
		for i, a := range []*adminclient.Client{a1, a2, a3} {
			if u, err := a.UserInfo(ctx, "dave"); err == nil {
				t.Fatalf("site%d: dave came back: %+v", i+1, u)
			}
		}
	})
}

// A site with users of its own may not join: it would have to merge or
// drop them.
func TestIAMJoinRefusesSiteWithUsers(t *testing.T) {
	ctx := context.Background()
	m := testsite.StartSites(t, 2, fastRetries, nil)
	if err := admin(t, m.Sites[1].Site).AddUser(ctx, "erin", "erin-secret-1"); err != nil {
		t.Fatal(err)
	}
	var specs []replication.SiteSpec
	for _, s := range m.Sites {
		specs = append(specs, replication.SiteSpec{Name: s.Name, Endpoint: s.Proxy.URL(), AccessKey: s.AccessKey, SecretKey: s.SecretKey})
	}
	_, err := m.Sites[0].Server().Replication().Add(ctx, specs)
	if !errors.Is(err, replication.ErrPeerHasData) || !strings.Contains(err.Error(), "IAM record") {
		t.Fatalf("join = %v, want ErrPeerHasData naming the IAM records", err)
	}
}

// TestIAMMismatchHeals: a record one site holds and its peer lacks (its
// send dropped) is found by mismatch detection, which compares the sites'
// IAM digests, and sent again; once the sites agree nothing more is sent.
func TestIAMMismatchHeals(t *testing.T) {
	ctx := context.Background()
	m := testsite.StartMesh(t, 2, fastRetries, nil)
	s1, s2 := m.Sites[0], m.Sites[1]
	if err := admin(t, s1.Site).AddUser(ctx, "frank", "frank-secret-1"); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 20*time.Second, func() error {
		err := iamConverged(&testsite.Mesh{Sites: m.Sites})
		if err != nil {
			err = fmt.Errorf("%w\nsite1 %+v\nsite2 %+v", err, s1.Server().IAM().Refs(), s2.Server().IAM().Refs())
		}
		return err
	})
	// site1 gains a user behind replication's back: applied as if from a
	// peer, so nothing is journalled for site2.
	tr, ok, err := s1.Server().IAM().Export("user", "frank")
	if err != nil || !ok {
		t.Fatalf("export frank: %v %v", ok, err)
	}
	tr.Name = "ghost"
	tr.Updated = time.Now().UnixNano()
	if _, err := s1.Server().IAM().Apply(ctx, tr); err != nil {
		t.Fatal(err)
	}
	if err := refused("InvalidAccessKeyId", canPut(s2.Site, t, "ghost", "frank-secret-1", "nobucket")); err != nil {
		t.Fatalf("site2 before the comparison: %v", err)
	}
	eng := s1.Server().Replication()
	testsite.Eventually(t, 20*time.Second, func() error {
		if _, err := eng.CheckMismatches(ctx); err != nil {
			return err
		}
		return iamConverged(&testsite.Mesh{Sites: m.Sites})
	})
	// The signature is accepted on site2 now: the user has no rights, and
	// a refused request on a bucket that does not exist is told so.
	if err := refused("NoSuchBucket", canPut(s2.Site, t, "ghost", "frank-secret-1", "nobucket")); err != nil {
		t.Fatalf("site2 after the comparison: %v", err)
	}
	testsite.Eventually(t, 10*time.Second, func() error { return testsite.Drained(s1.Site) })
	if n, err := eng.CheckMismatches(ctx); err != nil || n != 0 {
		t.Fatalf("after convergence: %d queued, %v", n, err)
	}
}
