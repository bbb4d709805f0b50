package cli

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cluster"
	"github.com/twinlake/twinlake/internal/testsite"
)

// startExternalEtcd runs a one-member etcd in the test process, with
// authentication on (user root), as an etcd run apart from the site would
// be, over TLS with certs' certificate when certs is set; it returns its
// client URL and root password.
func startExternalEtcd(t *testing.T, certs string) (string, string) {
	t.Helper()
	const password = "etcd-root-secret"
	scheme, files := "http", (*cluster.TLSFiles)(nil)
	var clientTLS *tls.Config
	if certs != "" {
		scheme = "https"
		files = &cluster.TLSFiles{CertFile: filepath.Join(certs, "public.crt"), KeyFile: filepath.Join(certs, "private.key"),
			TrustedCAFile: filepath.Join(certs, "CAs", "site.crt")}
		clientTLS = testsite.CertsClient(t, certs).Transport.(*http.Transport).TLSClientConfig
	}
	client, peer := scheme+"://"+testsite.FreeAddr(t), scheme+"://"+testsite.FreeAddr(t)
	e, err := cluster.StartEmbedded(t.Context(), cluster.EmbedConfig{
		Name: "ext", Dir: filepath.Join(t.TempDir(), "etcd"), PeerURL: peer, ClientURL: client, TLS: files,
		InitialCluster: map[string]string{"ext": peer}, ClusterToken: "external-" + t.Name(),
		ReadyTimeout: 30 * time.Second, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if err := cluster.EnableAuthAt(t.Context(), []string{client}, password, clientTLS, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	return client, password
}

// TestClusterExternalEtcd: a site of 3 nodes started with --etcd keeps its
// records in an etcd run apart from it, with the user and password the
// environment gives, over http or (trusting --certs-dir's CAs) https: no
// node runs an etcd member, any node takes any request, a leader killed
// with -9 is replaced with nothing acknowledged lost, and a node given
// another --cluster list is refused the site's records rather than
// sharing them.
func TestClusterExternalEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four server processes")
	}
	bin := testsite.BuildBinary(t)
	for _, withTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", withTLS), func(t *testing.T) { testExternalEtcd(t, bin, withTLS) })
	}
}

func testExternalEtcd(t *testing.T, bin string, withTLS bool) {
	certs := ""
	if withTLS {
		certs = t.TempDir()
		testsite.WriteCerts(t, certs)
	}
	etcdURL, password := startExternalEtcd(t, certs)
	env := []string{"TWINLAKE_ROOT_USER=clusteradmin", "TWINLAKE_ROOT_PASSWORD=cluster-secret-123",
		"TWINLAKE_KMS_SECRET_KEY=" + "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
		"TWINLAKE_ETCD_USER=root", "TWINLAKE_ETCD_PASSWORD=" + password}
	// With TLS the nodes keep objects of up to 64 KiB inline in etcd (at
	// most 1 KiB by default): a group of such writes must still fit in
	// one request to an etcd run apart, which takes 1.5 MiB by default.
	inline := ""
	if withTLS {
		inline = "64KiB"
	}
	cl := testsite.StartClusterWith(t, bin, t.TempDir(), 3, testsite.ClusterOptions{Certs: certs, Etcd: []string{etcdURL}, InlineLimit: inline}, env...)
	for i := range cl.Addrs {
		if cluster.HasMemberData(filepath.Join(cl.Dir(i), "etcd")) {
			t.Fatalf("node %s runs an etcd member of its own", cl.Addrs[i])
		}
	}

	creds := credentials.NewStaticV4("clusteradmin", "cluster-secret-123", "")
	clients := make([]*minio.Client, len(cl.Addrs))
	admins := make([]*adminclient.Client, len(cl.Addrs))
	for i, n := range cl.Addrs {
		c, err := minio.New(n, &minio.Options{Creds: creds, Secure: withTLS, Transport: cl.Client().Transport})
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = c
		if admins[i], err = adminclient.New(cl.URL(i), adminclient.Credentials{AccessKey: "clusteradmin", SecretKey: "cluster-secret-123"},
			adminclient.Config{HTTPClient: cl.Client()}); err != nil {
			t.Fatal(err)
		}
	}
	leader := siteLeader(t, admins, cl.Addrs, -1)
	info, err := admins[leader].ServerInfo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if e := info.Etcd; e == nil || e.Endpoints != 1 || len(e.Unreachable) != 0 || e.DBSizeInUse <= 0 || e.Quota != 2<<30 || len(e.Alarms) != 0 {
		t.Fatalf("admin info reports the external etcd as %+v: want its one endpoint, its use, its 2 GiB quota", info.Etcd)
	}
	if i := slices.IndexFunc(info.Nodes, func(n adminclient.NodeInfo) bool { return n.Voter }); i >= 0 {
		t.Fatalf("admin info names node %s an etcd voter of a site whose etcd runs apart", info.Nodes[i].Address)
	}

	// Any node takes any request; a small object and one coded across
	// the nodes.
	ctx := t.Context()
	if err := clients[(leader+1)%3].MakeBucket(ctx, "data", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{"small": bytes.Repeat([]byte("s"), 4<<10), "large": bytes.Repeat([]byte("large object "), 20<<10)}
	for i := range 24 {
		bodies[fmt.Sprint("mid", i)] = bytes.Repeat([]byte{byte(i)}, 60<<10)
	}
	var wg sync.WaitGroup
	putErrs := make(chan error, len(bodies))
	for k, b := range bodies {
		wg.Go(func() {
			_, err := clients[(leader+1)%3].PutObject(ctx, "data", k, bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{})
			putErrs <- err
		})
	}
	wg.Wait()
	close(putErrs)
	for err := range putErrs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Coded across the nodes: every object but the inline ones.
	rep, err := admins[leader].HealScan(ctx, adminclient.HealOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"": 26, "64KiB": 1}[inline]; rep.BlobFiles != want {
		t.Fatalf("with --cluster-inline-limit %q the site codes %d objects across its nodes, want %d", inline, rep.BlobFiles, want)
	}
	readAll := func(c *minio.Client) error {
		for k, want := range bodies {
			o, err := c.GetObject(ctx, "data", k, minio.GetObjectOptions{})
			if err != nil {
				return err
			}
			got, err := io.ReadAll(o)
			o.Close()
			if err != nil {
				return err
			}
			if !bytes.Equal(got, want) {
				return fmt.Errorf("%s: read %d bytes that differ from the %d written", k, len(got), len(want))
			}
		}
		return nil
	}
	if err := readAll(clients[(leader+2)%3]); err != nil {
		t.Fatal(err)
	}

	// The site's records are in the external etcd, under its node list.
	var etcdTLS *tls.Config
	if withTLS {
		etcdTLS = cl.Client().Transport.(*http.Transport).TLSClientConfig
	}
	ec, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdURL}, Username: "root", Password: password,
		TLS: etcdTLS, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	resp, err := ec.Get(ctx, "/twinlake/site/nodes")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the site's node list in etcd: %v, %v", resp, err)
	}
	recorded := strings.Split(string(resp.Kvs[0].Value), ",")
	if want := slices.Sorted(slices.Values(cl.Addrs)); !slices.Equal(slices.Sorted(slices.Values(recorded)), want) {
		t.Fatalf("etcd records the nodes %v, want %v", recorded, want)
	}
	if resp, err := ec.Get(ctx, "/twinlake/site/meta/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || resp.Count == 0 {
		t.Fatalf("no metadata records in the external etcd: %v, %v", resp, err)
	}

	// The leader killed: another node leads, over the same etcd, and
	// every acknowledged object reads; back, the node rejoins.
	cl.KillNode(leader)
	survivor := (leader + 1) % 3
	if next := siteLeader(t, admins, cl.Addrs, leader); next == leader {
		t.Fatalf("node %s still leads after its kill", cl.Addrs[leader])
	}
	testsite.Eventually(t, 30*time.Second, func() error { return readAll(clients[survivor]) })
	bodies["after"] = []byte("written after the leader's loss")
	if _, err := clients[survivor].PutObject(ctx, "data", "after", bytes.NewReader(bodies["after"]), int64(len(bodies["after"])), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	cl.Start()
	testsite.Eventually(t, 30*time.Second, func() error {
		info, err := admins[survivor].ServerInfo(ctx)
		if err != nil {
			return err
		}
		for _, n := range info.Nodes {
			if n.Address == cl.Addrs[leader] && n.State == "offline" {
				return errors.New("the restarted node is not back")
			}
		}
		return nil
	})
	if err := readAll(clients[leader]); err != nil {
		t.Fatal(err)
	}

	// A node of another list, on the same etcd, is refused and changes
	// nothing.
	stray := testsite.FreeAddr(t)
	args := []string{"--cluster", stray + "," + testsite.FreeAddr(t), "--etcd", etcdURL}
	if withTLS {
		args = append(args, "--certs-dir", certs)
	}
	p := testsite.SpawnProcess(t, bin, t.TempDir(), stray, args, env...)
	testsite.Eventually(t, 30*time.Second, func() error {
		if !strings.Contains(p.Log(), "another node list") {
			return fmt.Errorf("the stray node's log says nothing of the other site:\n%s", p.Log())
		}
		return nil
	})
	p.Kill(t)
	if resp, err := ec.Get(ctx, "/twinlake/site/members/"+stray); err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("the stray node registered in the site: %v, %v", resp, err)
	}
	if err := readAll(clients[survivor]); err != nil {
		t.Fatal(err)
	}

	// Under a name of its own (--etcd-site), a site of 2 other nodes
	// shares the etcd: it serves, and neither site sees the other's.
	other := testsite.StartClusterWith(t, bin, t.TempDir(), 2, testsite.ClusterOptions{Certs: certs, Etcd: []string{etcdURL}, EtcdSite: "other"}, env...)
	oc, err := minio.New(other.Addrs[0], &minio.Options{Creds: creds, Secure: withTLS, Transport: other.Client().Transport})
	if err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 30*time.Second, func() error { return oc.MakeBucket(ctx, "elsewhere", minio.MakeBucketOptions{}) })
	if _, err := oc.PutObject(ctx, "elsewhere", "k", strings.NewReader("other site"), 10, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if ok, err := clients[survivor].BucketExists(ctx, "elsewhere"); err != nil || ok {
		t.Fatalf("the first site sees the other site's bucket: %v, %v", ok, err)
	}
	if ok, err := oc.BucketExists(ctx, "data"); err != nil || ok {
		t.Fatalf("the other site sees the first site's bucket: %v, %v", ok, err)
	}
	if resp, err := ec.Get(ctx, "/twinlake/other/nodes"); err != nil || len(resp.Kvs) != 1 || !slices.Equal(slices.Sorted(slices.Values(strings.Split(string(resp.Kvs[0].Value), ","))), slices.Sorted(slices.Values(other.Addrs))) {
		t.Fatalf("the other site's node list: %v, %v", resp, err)
	}
	if resp, err := ec.Get(ctx, "/twinlake/site/nodes"); err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != strings.Join(recorded, ",") {
		t.Fatalf("the first site's node list changed: %v, %v", resp, err)
	}
	if err := readAll(clients[survivor]); err != nil {
		t.Fatal(err)
	}
}

// siteLeader waits until the site names a leader other than node not
// (-1: any), asking the other nodes, and returns its index.
func siteLeader(t *testing.T, admins []*adminclient.Client, addrs []string, not int) int {
	t.Helper()
	leader := -1
	testsite.Eventually(t, 60*time.Second, func() error {
		for i, a := range admins {
			if i == not {
				continue
			}
			info, err := a.ServerInfo(t.Context())
			if err != nil {
				continue
			}
			for _, n := range info.Nodes {
				if j := slices.Index(addrs, n.Address); n.State == "leader" && j >= 0 && j != not {
					leader = j
					return nil
				}
			}
		}
		return errors.New("no leader yet")
	})
	return leader
}
