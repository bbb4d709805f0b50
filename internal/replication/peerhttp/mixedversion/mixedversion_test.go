package mixedversion_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/tags"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/app"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/replication"
	"github.com/twinlake/twinlake/internal/replication/peerhttp"
	"github.com/twinlake/twinlake/internal/replication/peerhttp/internal/peerv1"
	"github.com/twinlake/twinlake/internal/replication/peerwire"
	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

var fastRetries = map[string]string{"retry_base_delay": "50ms", "retry_max_delay": "300ms", "max_retries": "50"}

// speaksV1 runs a site on the frozen version 1 peer client and server for
// as long as old holds, and on this build's once it is cleared: a restart
// after clearing it is that site's upgrade.
func speaksV1(old *atomic.Bool) testsite.Option {
	v2Dial := peerhttp.Dialer(nil)
	v1Dial := peerv1.Dialer(nil)
	return testsite.WithApp(func(c *app.Config) {
		c.PeerDial = func(endpoint string, creds replication.Credentials) (replication.Peer, error) {
			if old.Load() {
				return v1Dial(endpoint, creds)
			}
			return v2Dial(endpoint, creds)
		}
		c.PeerServer = func(pc peerhttp.Config) (http.Handler, error) {
			if !old.Load() {
				return peerhttp.NewServer(pc)
			}
			return peerv1.NewServer(peerv1.Config{Engine: pc.Engine, Auth: pc.Auth, Trace: pc.Trace, Logger: pc.Logger,
				InboundGuard: pc.InboundGuard, CatalogExport: pc.CatalogExport, MaxMetaBytes: pc.MaxMetaBytes})
		}
	})
}

// wantAnswers checks the protocol header a site's peer API answers with
// ("" at version 1).
func wantAnswers(t *testing.T, s *testsite.Site, want string) {
	t.Helper()
	resp, err := http.Get(s.URL + peerhttp.Prefix + "health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get(peerwire.Header); got != want {
		t.Fatalf("%s answers with protocol %q, want %q", s.URL, got, want)
	}
}

func s3(t *testing.T, s *testsite.Site) *minio.Client {
	t.Helper()
	u, _ := url.Parse(s.URL)
	c, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// listing is every version of bucket on a site: key, ID, ETag, marker.
func listing(ctx context.Context, c *minio.Client, bucket string) (string, error) {
	var out []string
	for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{WithVersions: true, Recursive: true}) {
		if o.Err != nil {
			return "", o.Err
		}
		out = append(out, fmt.Sprintf("%s %s %s %t", o.Key, o.VersionID, o.ETag, o.IsDeleteMarker))
	}
	sort.Strings(out)
	return strings.Join(out, "\n"), nil
}

// same waits until both sites list the same versions of bucket, of which
// there are want, and both have nothing left to send.
func same(t *testing.T, m *testsite.Mesh, bucket string, want int) {
	t.Helper()
	ctx := context.Background()
	a, b := s3(t, m.Sites[0].Site), s3(t, m.Sites[1].Site)
	testsite.Eventually(t, 20*time.Second, func() error {
		la, err := listing(ctx, a, bucket)
		if err != nil {
			return err
		}
		lb, err := listing(ctx, b, bucket)
		if err != nil {
			return err
		}
		if n := strings.Count(la, "\n") + 1; la != lb || n != want {
			return fmt.Errorf("site1 (%d versions):\n%s\nsite2:\n%s", n, la, lb)
		}
		for _, s := range m.Sites {
			if err := testsite.Drained(s.Site); err != nil {
				return err
			}
		}
		return nil
	})
}

// exercise writes on each site in turn what replicates (small and large
// objects, a delete marker, a purge, bucket tags) and checks that both
// sites converge, and that mismatch detection (digests, slot listings)
// finds nothing to do across the pair.
func exercise(t *testing.T, m *testsite.Mesh, bucket string) {
	t.Helper()
	ctx := context.Background()
	large := bytes.Repeat([]byte("L"), 300<<10) // sent alone, not batched
	versions := 0
	for i, s := range m.Sites {
		c := s3(t, s.Site)
		if i == 0 {
			if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
				t.Fatal(err)
			}
			testsite.Eventually(t, 10*time.Second, func() error {
				_, err := s3(t, m.Sites[1].Site).GetBucketVersioning(ctx, bucket)
				return err
			})
		}
		key := func(k string) string { return fmt.Sprintf("%s-from-%s", k, s.Name) }
		for k, body := range map[string][]byte{"small": []byte("hello"), "large": large, "gone": []byte("bye")} {
			if _, err := c.PutObject(ctx, bucket, key(k), bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.RemoveObject(ctx, bucket, key("small"), minio.RemoveObjectOptions{}); err != nil { // delete marker
			t.Fatal(err)
		}
		versions += 4
		same(t, m, bucket, versions)
		gone, err := c.StatObject(ctx, bucket, key("gone"), minio.StatObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.RemoveObject(ctx, bucket, key("gone"), minio.RemoveObjectOptions{VersionID: gone.VersionID}); err != nil { // purge
			t.Fatal(err)
		}
		versions--
		tg, _ := tags.NewTags(map[string]string{"set-by": s.Name}, false)
		if err := c.SetBucketTagging(ctx, bucket, tg); err != nil {
			t.Fatal(err)
		}
		same(t, m, bucket, versions)
		for _, o := range m.Sites {
			testsite.Eventually(t, 10*time.Second, func() error {
				got, err := s3(t, o.Site).GetBucketTagging(ctx, bucket)
				if err != nil || got.ToMap()["set-by"] != s.Name {
					return fmt.Errorf("%s: bucket tags %v, %v", o.Name, got, err)
				}
				return nil
			})
		}
	}
	for _, s := range m.Sites {
		if n, err := s.Server().Replication().CheckMismatches(ctx); err != nil || n != 0 {
			t.Fatalf("%s: mismatch detection queued %d, %v", s.Name, n, err)
		}
	}
}

// TestRollingUpgrade: a site of this build and a site still speaking
// protocol version 1 (the frozen copy of the wire before peerwire) join
// and replicate both ways; the old site is then upgraded by a restart
// while the other keeps writing, and the pair keeps replicating.
func TestRollingUpgrade(t *testing.T) {
	var old atomic.Bool
	old.Store(true)
	m := testsite.StartMesh(t, 2, fastRetries, func(i int) []testsite.Option {
		if i == 1 {
			return []testsite.Option{speaksV1(&old)}
		}
		return nil
	})
	wantAnswers(t, m.Sites[1].Site, "")
	exercise(t, m, "mixed")

	// The upgrade: site2 goes down, site1 writes meanwhile, site2 comes
	// back speaking version 2.
	ctx := context.Background()
	m.Sites[1].Stop()
	if _, err := s3(t, m.Sites[0].Site).PutObject(ctx, "mixed", "during-upgrade", strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	old.Store(false)
	m.Sites[1].Restart()
	wantAnswers(t, m.Sites[1].Site, "2")
	same(t, m, "mixed", 7)
	exercise(t, m, "upgraded")
}

// TestTablesDRAcrossVersions: a table created on the primary is verified
// on the replica when either of them still speaks protocol version 1.
func TestTablesDRAcrossVersions(t *testing.T) {
	for _, v1 := range []int{0, 1} {
		t.Run(fmt.Sprintf("site%d-speaks-v1", v1+1), func(t *testing.T) {
			var old atomic.Bool
			old.Store(true)
			m := testsite.StartSites(t, 2, fastRetries, func(i int) []testsite.Option {
				if i == v1 {
					return []testsite.Option{speaksV1(&old)}
				}
				return nil
			})
			primary, replica := m.Sites[0], m.Sites[1]
			ctx := context.Background()
			for _, s := range m.Sites {
				if err := s.Server().Settings().Set(ctx, "tables", map[string]string{"replica_catalog_scan_interval": "200ms"}); err != nil {
					t.Fatal(err)
				}
			}
			if err := replica.Server().Settings().Set(ctx, "tables", map[string]string{"replica_catalog": "on"}); err != nil {
				t.Fatal(err)
			}
			m.Join(t)
			adm, err := adminclient.New(primary.URL, adminclient.Credentials{AccessKey: primary.AccessKey, SecretKey: primary.SecretKey}, adminclient.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := adm.CreateWarehouse(ctx, "lake", adminclient.WarehouseCreateRequest{}); err != nil {
				t.Fatal(err)
			}
			cat := icetest.Catalog(t, primary.URL, primary.AccessKey, primary.SecretKey, "lake")
			id := table.Identifier{"sales", "orders"}
			if err := cat.CreateNamespace(ctx, id[:1], nil); err != nil {
				t.Fatal(err)
			}
			tbl, err := cat.CreateTable(ctx, id, icetest.Schema)
			if err != nil {
				t.Fatal(err)
			}
			rows := icetest.Rows(0, 10)
			tbl, err = tbl.AppendTable(ctx, rows, 1024, nil)
			rows.Release()
			if err != nil {
				t.Fatal(err)
			}
			loc := tbl.MetadataLocation()
			var want int64
			fmt.Sscanf(loc[strings.LastIndex(loc, "/")+1:], "%05d-", &want)
			testsite.Eventually(t, 30*time.Second, func() error {
				for _, e := range replica.Server().Scanner().Status(0, 0).Entries {
					if e.Name == "orders" && e.Status == "OK" && e.Verified == want {
						return nil
					}
				}
				return fmt.Errorf("orders not verified on the replica: %+v", replica.Server().Scanner().Status(0, 0).Entries)
			})
			ids, err := icetest.ScanIDs(ctx, loadTable(t, icetest.Catalog(t, replica.URL, replica.AccessKey, replica.SecretKey, "lake"), id))
			if err != nil || len(ids) != 10 {
				t.Fatalf("replica scan = %v, %v", ids, err)
			}
		})
	}
}

func loadTable(t *testing.T, cat interface {
	LoadTable(context.Context, table.Identifier) (*table.Table, error)
}, id table.Identifier) *table.Table {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestFutureVersionRefused: a site refuses a peer claiming a version it
// does not know, before reading the call, with an answer naming both
// versions; the caller sees a refusal, not a link failure, and the site
// applied nothing. Joining such a site fails with the same message.
func TestFutureVersionRefused(t *testing.T) {
	s := testsite.Start(t)
	creds := replication.Credentials{AccessKey: s.AccessKey, SecretKey: s.SecretKey}
	c, err := peerhttp.NewConfig(s.URL, creds, peerhttp.ClientConfig{Protocol: 99})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = c.SendBucket(ctx, objects.Bucket{Name: "from-the-future", Created: time.Now(), ModTime: time.Now().UnixNano()}, false, 0)
	wantRefusal(t, err)
	if _, err := s3(t, s).GetBucketVersioning(ctx, "from-the-future"); err == nil {
		t.Fatal("the refused call was applied")
	}
	_, err = c.Info(ctx)
	wantRefusal(t, err)

	// The raw answer: 400, this site's version in the header, a JSON error.
	req, _ := http.NewRequest(http.MethodGet, s.URL+peerhttp.Prefix+"info", nil)
	req.Header.Set(peerwire.Header, "99")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var eb peerwire.Error
	if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get(peerwire.Header) != "2" || eb.Code != peerwire.CodeIncompatible {
		t.Fatalf("answer %d %q %+v", resp.StatusCode, resp.Header.Get(peerwire.Header), eb)
	}

	// Join: a site whose peer client speaks version 99 cannot add a
	// version 2 site.
	m := testsite.StartSites(t, 2, nil, func(i int) []testsite.Option {
		if i > 0 {
			return nil
		}
		return []testsite.Option{testsite.WithApp(func(c *app.Config) {
			c.PeerDial = peerhttp.DialerConfig(peerhttp.ClientConfig{Protocol: 99})
		})}
	})
	var specs []replication.SiteSpec
	for _, s := range m.Sites {
		specs = append(specs, replication.SiteSpec{Name: s.Name, Endpoint: s.URL, AccessKey: s.AccessKey, SecretKey: s.SecretKey})
	}
	_, err = m.Sites[0].Server().Replication().Add(ctx, specs)
	wantRefusal(t, err)
}

func wantRefusal(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, peerwire.ErrIncompatible) || !errors.Is(err, replication.ErrRefused) || errors.Is(err, replication.ErrLinkDown) {
		t.Fatalf("%v: want a refusal of the protocol version", err)
	}
	for _, want := range []string{"speaks version 99", "version 2", "accepts versions 1 to 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%q does not name %q", err, want)
		}
	}
}
