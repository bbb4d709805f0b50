package e2e

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/encrypt"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
)

// TestClusterReplicaWritesWhereItArrives: a single-node primary replicates
// to a 4-node site through one of its nodes that does not lead; that node
// writes the data of the versions it receives itself (the leader checks
// and commits them), and every version arrives whole: large ones, one in
// parts (each to a blob of its own) and encrypted ones, whole and in
// parts (which the node encrypts under the data keys the leader made),
// read through the leader and through the node. When that node dies, the primary
// sends to another node of the site.
func TestClusterReplicaWritesWhereItArrives(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five server processes")
	}
	bin := testsite.BuildBinary(t)
	dir := t.TempDir()
	env := clusterEnv()
	primary := newSingleSite(t, bin, filepath.Join(dir, "primary"), env)
	dr := testsite.StartCluster(t, bin, filepath.Join(dir, "dr"), 4, env...)
	op := &operator{t: t, bin: bin, cfg: filepath.Join(dir, "client")}
	op.must("alias", "set", "prim", "http://"+primary.addr(), rootUser, rootSecret)
	// Asked through the leader (at first through node 0): the node
	// killed below may be node 0.
	op.must("alias", "set", "asked", "http://"+dr.Addrs[0], rootUser, rootSecret)
	info := func() adminclient.ServerInfo {
		var info adminclient.ServerInfo
		if err := json.Unmarshal([]byte(op.must("admin", "info", "asked", "--json")), &info); err != nil {
			t.Fatal(err)
		}
		return info
	}
	var leader, via string
	for _, n := range info().Nodes {
		switch {
		case n.State == "leader":
			leader = n.Address
		case via == "":
			via = n.Address
		}
	}
	op.must("alias", "set", "dr", "http://"+via, rootUser, rootSecret)
	op.must("alias", "set", "asked", "http://"+leader, rootUser, rootSecret)
	op.must("admin", "replicate", "add", "prim", "dr")
	op.must("mb", "prim/rep")

	client := func(addr string) *minio.Client {
		c, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(rootUser, rootSecret, ""), Region: "us-east-1"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	src := client(primary.addr())
	want := map[string][]byte{}
	put := func(key string, size int, opts minio.PutObjectOptions) {
		body := make([]byte, size)
		rand.Read(body)
		if _, err := src.PutObject(t.Context(), "rep", key, bytes.NewReader(body), int64(size), opts); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
		want[key] = body
	}
	for i := range 3 {
		put(fmt.Sprintf("large-%d", i), 2<<20+i, minio.PutObjectOptions{DisableMultipart: true})
	}
	put("parts", 11<<20, minio.PutObjectOptions{PartSize: 5 << 20})
	put("sealed", 2<<20, minio.PutObjectOptions{DisableMultipart: true, ServerSideEncryption: encrypt.NewSSE()})
	put("sealed-parts", 11<<20, minio.PutObjectOptions{PartSize: 5 << 20, ServerSideEncryption: encrypt.NewSSE()})

	for _, addr := range []string{leader, via} {
		c := client(addr)
		testsite.Eventually(t, 60*time.Second, func() error {
			for key, body := range want {
				obj, err := c.GetObject(t.Context(), "rep", key, minio.GetObjectOptions{})
				if err != nil {
					return err
				}
				got, err := io.ReadAll(obj)
				obj.Close()
				if err != nil || !bytes.Equal(got, body) {
					return fmt.Errorf("%s through %s: %d bytes (%v), want %d", key, addr, len(got), err, len(body))
				}
			}
			return nil
		})
	}
	for _, n := range info().Nodes {
		switch {
		case n.Address == via && n.WritesHere < 6:
			t.Errorf("the node the primary sends to wrote the data of %d versions itself, want at least the 3 large ones, the one in parts and the 2 encrypted ones", n.WritesHere)
		case n.Address != via && n.WritesHere != 0:
			t.Errorf("node %s (%s) counts %d writes offered by it", n.Address, n.State, n.WritesHere)
		}
	}

	// The node the sites were joined through dies: the primary sends to
	// another node of the site, which its health answers named, and
	// what it writes meanwhile arrives.
	dr.KillNode(slices.Index(dr.Addrs, via))
	c := client(leader)
	arrives := func(key string, within time.Duration) {
		t.Helper()
		testsite.Eventually(t, within, func() error {
			obj, err := c.GetObject(t.Context(), "rep", key, minio.GetObjectOptions{})
			if err != nil {
				return err
			}
			defer obj.Close()
			got, err := io.ReadAll(obj)
			if err != nil || !bytes.Equal(got, want[key]) {
				return fmt.Errorf("%s: %d bytes, %v", key, len(got), err)
			}
			return nil
		})
	}
	put("while-down", 300<<10, minio.PutObjectOptions{})
	arrives("while-down", 30*time.Second)

	// The node the primary sends to now (the leader, if no other counts
	// the write) stops answering (paused) with a version on its way to
	// it: the primary gives that call up once a health call moves its
	// calls to another node, and sends the version there, well before
	// the call's own deadline (minutes).
	before := map[string]int64{}
	for _, n := range info().Nodes {
		before[n.Address] = n.WritesHere
	}
	put("finding", 2<<20, minio.PutObjectOptions{DisableMultipart: true})
	arrives("finding", 30*time.Second)
	now := ""
	for _, n := range info().Nodes {
		if n.WritesHere > before[n.Address] {
			now = n.Address
		}
	}
	if now == "" {
		now = leader // which writes what it receives itself
	}
	// The killed node back first, so that the site keeps its quorum
	// with one node paused.
	dr.StartNode(slices.Index(dr.Addrs, via))
	testsite.Eventually(t, 60*time.Second, func() error { return dr.Ready(slices.Index(dr.Addrs, via)) })
	dr.PauseNode(slices.Index(dr.Addrs, now))
	defer dr.ResumeNode(slices.Index(dr.Addrs, now))
	// Its arrival is read from its version (a read of its data could
	// wait for the paused node's shard until the node API's timeout).
	c = client(via)
	put("while-paused", 2<<20, minio.PutObjectOptions{DisableMultipart: true})
	sum := md5.Sum(want["while-paused"])
	testsite.Eventually(t, 90*time.Second, func() error {
		st, err := c.StatObject(t.Context(), "rep", "while-paused", minio.StatObjectOptions{})
		if err != nil {
			return err
		}
		if st.Size != 2<<20 || st.ETag != hex.EncodeToString(sum[:]) {
			return fmt.Errorf("while-paused: %d bytes, ETag %s", st.Size, st.ETag)
		}
		return nil
	})
}
