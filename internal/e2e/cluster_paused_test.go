package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
)

// TestClusterWritesAndDeletesGoOnWithAPausedNode: with one node of a
// 4-node site paused (it takes connections and answers nothing), writes
// and deletes through the others are acknowledged without waiting for its
// calls' timeouts (10 s a shard upload, 30 s a removal, each: 10 PUTs and
// 10 DELETEs took over 100 s), and once it resumes the drive watcher heals
// what they left out: the shards it missed are rebuilt and the ones of
// deleted objects it kept removed, with no heal asked for.
func TestClusterWritesAndDeletesGoOnWithAPausedNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four server processes")
	}
	bin := testsite.BuildBinary(t)
	dir := t.TempDir()
	cl := testsite.StartClusterWith(t, bin, filepath.Join(dir, "site"), 4, testsite.ClusterOptions{}, clusterEnv()...)
	op := &operator{t: t, bin: bin, cfg: filepath.Join(dir, "client")}
	for i, a := range cl.Addrs {
		op.must("alias", "set", fmt.Sprint("n", i), "http://"+a, rootUser, rootSecret)
	}
	var info adminclient.ServerInfo
	if err := json.Unmarshal([]byte(op.must("admin", "info", "n0", "--json")), &info); err != nil {
		t.Fatal(err)
	}
	paused := slices.IndexFunc(info.Nodes, func(n adminclient.NodeInfo) bool { return !n.Voter && n.State != "leader" })
	if paused < 0 {
		t.Fatalf("no node that neither leads nor votes among %+v", info.Nodes)
	}
	paused = slices.Index(cl.Addrs, info.Nodes[paused].Address)
	via := (paused + 1) % len(cl.Addrs)
	s3, err := minio.New(cl.Addrs[via], &minio.Options{Creds: credentials.NewStaticV4(rootUser, rootSecret, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	op.must("mb", fmt.Sprintf("n%d/paused", via))
	body := func(i, size int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, size) }
	put := func(key string, data []byte) {
		t.Helper()
		if _, err := s3.PutObject(ctx, "paused", key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
	const n = 10
	for i := range n {
		put(fmt.Sprint("before/", i), body(i, 4096))
	}

	cl.PauseNode(paused)
	resumed := false
	defer func() {
		if !resumed {
			cl.ResumeNode(paused)
		}
	}()
	start := time.Now()
	for i := range n {
		size := 4096
		if i == n-1 {
			size = 24 << 20 // streamed to the nodes, its shards more than the sockets hold
		}
		put(fmt.Sprint("during/", i), body(i, size))
	}
	wrote := time.Since(start)
	for i := range n {
		if err := s3.RemoveObject(ctx, "paused", fmt.Sprint("before/", i), minio.RemoveObjectOptions{}); err != nil {
			t.Fatalf("delete before/%d: %v", i, err)
		}
	}
	deleted := time.Since(start) - wrote
	t.Logf("node %d paused: %d PUTs took %v, %d DELETEs %v", paused, n, wrote.Round(time.Millisecond), n, deleted.Round(time.Millisecond))
	// Held for the calls' timeouts, they would take over 100 s and 300 s.
	if wrote > time.Minute || deleted > time.Minute {
		t.Fatalf("a paused node held the writes (%v for %d) or deletes (%v for %d)", wrote, n, deleted, n)
	}
	// What the site reports while the node is paused comes without
	// waiting for its drive's answer (30 s, a call's timeout, before): its
	// drive as not answering, the others' as sound.
	start = time.Now()
	if err := json.Unmarshal([]byte(op.must("admin", "info", fmt.Sprint("n", via), "--json")), &info); err != nil {
		t.Fatal(err)
	}
	metrics := op.must("admin", "prometheus", "metrics", fmt.Sprint("n", via))
	var heal adminclient.HealReport
	out, healErr := op.run("admin", "heal", fmt.Sprint("n", via), "--scan", "--dry-run", "--json")
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&heal); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// Blobs left unchecked make the scan exit with an error, so that a
	// script does not take it for a clean one.
	if healErr == nil || !strings.Contains(out, `"status":"error"`) || !strings.Contains(out, "not checked") {
		t.Errorf("heal scan with a node paused exited with %v:\n%s\nwant an error naming the blobs not checked", healErr, out)
	}
	asked := time.Since(start)
	t.Logf("admin info, a metrics scrape and a heal scan with the node paused: %v", asked.Round(time.Millisecond))
	if asked > 30*time.Second {
		t.Fatalf("admin info, a metrics scrape and a heal scan waited %v for the paused node", asked)
	}
	if heal.Unanswered == 0 || heal.MissingCount != 0 {
		t.Errorf("heal scan with a node paused: %+v; want blobs unanswered there, none missing", heal)
	}
	for _, node := range info.Nodes {
		if sound := node.Address != cl.Addrs[paused]; (node.Drive == "ok") != sound {
			t.Errorf("admin info with %s paused: node %s drive %q", cl.Addrs[paused], node.Address, node.Drive)
		}
	}
	for i, a := range cl.Addrs {
		want := fmt.Sprintf("twinlake_drive_up{drive=%q} %d", a, map[bool]int{true: 0, false: 1}[i == paused])
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics with %s paused lack %s", cl.Addrs[paused], want)
		}
	}
	// admin heal without --scan names the drive that does not answer.
	if out := op.must("admin", "heal", fmt.Sprint("n", via)); !strings.Contains(out, "1 of 4 do not answer: "+cl.Addrs[paused]+" (") {
		t.Errorf("admin heal with %s paused:\n%s", cl.Addrs[paused], out)
	}
	cl.ResumeNode(paused)
	resumed = true

	for i := range n {
		size := 4096
		if i == n-1 {
			size = 24 << 20
		}
		o, err := s3.GetObject(ctx, "paused", fmt.Sprint("during/", i), minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(o)
		o.Close()
		if err != nil || !bytes.Equal(got, body(i, size)) {
			t.Fatalf("during/%d read back: %d bytes, %v", i, len(got), err)
		}
	}
	// The watcher heals on its own: a dry-run scan finds, in time, nothing
	// degraded and no orphan.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := op.run("admin", "heal", fmt.Sprint("n", via), "--scan", "--dry-run", "--json")
		var rep adminclient.HealReport
		if err == nil {
			err = json.Unmarshal([]byte(out), &rep)
		}
		if err == nil && rep.Degraded == 0 && rep.Orphans == 0 && rep.MissingCount == 0 && rep.Unanswered == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no heal after the node resumed: %+v, %v", rep, err)
		}
		time.Sleep(2 * time.Second)
	}
}
