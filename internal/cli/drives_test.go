package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/testsite"
)

// TestServerOnDrives: the real binary with its object data erasure-coded
// across 4 drives (2+2) serves every object with a drive's shards gone or
// a shard corrupt; admin heal rebuilds them; the drives must come back in
// their places and number; an empty drive put in place of one is healed in
// the background at startup; with 3 of 4 shards gone an object is reported
// lost, never served wrong.
func TestServerOnDrives(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the server binary several times")
	}
	bin := testsite.BuildBinary(t)
	base := t.TempDir()
	dir := filepath.Join(base, "meta")
	var drives []string
	for i := range 4 {
		drives = append(drives, filepath.Join(base, fmt.Sprint("drive", i)))
	}
	env := []string{"TWINLAKE_ROOT_USER=drivesadmin", "TWINLAKE_ROOT_PASSWORD=drives-secret-123"}
	addr := testsite.FreeAddr(t)
	start := func(list []string) *testsite.Process {
		return testsite.StartProcessArgs(t, bin, dir, addr, []string{"--drives", strings.Join(list, ",")}, env...)
	}
	proc := start(drives)

	e := newCLIEnv(t)
	e.must("alias", "set", "s1", "http://"+addr, "drivesadmin", "drives-secret-123")
	c, err := cmdutil.NewS3Client(cmdutil.Alias{URL: "http://" + addr, AccessKey: "drivesadmin", SecretKey: "drives-secret-123"}, cmdutil.S3ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	e.must("mb", "s1/ecdata")
	rng := rand.New(rand.NewPCG(9, 9))
	objects := map[string][]byte{}
	for i, size := range []int{300 << 10, 1<<20 + 7, 3 << 20, 200 << 10, 2<<20 + 1, 700 << 10} {
		body := make([]byte, size)
		for j := range body {
			body[j] = byte(rng.Uint32())
		}
		key := fmt.Sprint("obj", i)
		objects[key] = body
		if _, err := c.PutObject(t.Context(), "ecdata", key, bytes.NewReader(body), int64(size), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	readAll := func() error {
		for key, want := range objects {
			got, err := getObject(t.Context(), c, "ecdata", key)
			if err != nil {
				return fmt.Errorf("GET %s: %w", key, err)
			}
			if !bytes.Equal(got, want) {
				return fmt.Errorf("GET %s: %d bytes, not what was written", key, len(got))
			}
		}
		return nil
	}
	if err := readAll(); err != nil {
		t.Fatal(err)
	}
	ids := shardIDs(t, drives[0])
	if len(ids) != len(objects) {
		t.Fatalf("drive 0 holds %d shards for %d objects", len(ids), len(objects))
	}
	if plain := shardIDs(t, dir); len(plain) != 0 {
		t.Fatalf("the metadata directory holds %d blob files", len(plain))
	}

	// A drive's shards gone: every object reads; heal puts them back.
	os.RemoveAll(filepath.Join(drives[1], "blobs", ids[0][:2]))
	for _, id := range ids {
		os.Remove(shardFile(drives[1], id))
	}
	if err := readAll(); err != nil {
		t.Fatalf("with drive 1's shards gone: %v", err)
	}
	rep := checkJSONStyle(t, e.must("admin", "heal", "s1", "--scan", "--json"))[0]
	if rep["degraded"] != 6.0 || rep["shardsRebuilt"] != 6.0 || rep["missingCount"] != 0.0 || rep["layout"] != "2+2" || rep["drives"] != 4.0 {
		t.Fatalf("heal: %v", rep)
	}
	if got := shardIDs(t, drives[1]); len(got) != len(ids) {
		t.Fatalf("drive 1 holds %d shards after the heal, want %d", len(got), len(ids))
	}
	if out := e.must("admin", "info", "s1"); !strings.Contains(out, "Heal:       done") || !strings.Contains(out, "6 degraded, 6 shards rebuilt, 0 missing") {
		t.Fatalf("admin info after the heal:\n%s", out)
	}
	var scraped strings.Builder
	if err := cmdutil.ScrapeMetrics(t.Context(), cmdutil.Alias{URL: "http://" + addr, AccessKey: "drivesadmin", SecretKey: "drives-secret-123"}, &scraped); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`twinlake_drive_up{drive="` + drives[1] + `"} 1`, "twinlake_heal_progress_percent 100",
		"twinlake_heal_degraded_blobs 6", "twinlake_heal_shards_rebuilt 6"} {
		if !strings.Contains(scraped.String(), want) {
			t.Fatalf("metrics lack %s:\n%s", want, testsite.GrepLines(scraped.String(), "twinlake_drive_")+testsite.GrepLines(scraped.String(), "twinlake_heal_"))
		}
	}

	// admin trace --call storage shows a PUT's shard written on each drive.
	traced, stop := adminEnv{cliEnv: e}.startTrace(t, "--json", "--call", "storage", "s1")
	written := map[string]bool{}
	waitWithin(t, 20*time.Second, "a shard write traced on every drive", func() bool {
		if _, err := c.PutObject(t.Context(), "ecdata", "traced", bytes.NewReader(make([]byte, 300<<10)), 300<<10, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		for _, line := range strings.Split(traced.String(), "\n") {
			var ev struct{ FuncName, Path string }
			if json.Unmarshal([]byte(line), &ev) == nil && ev.FuncName == "storage.WriteShard" {
				written[filepath.Dir(ev.Path)] = true
			}
		}
		return len(written) == len(drives)
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, d := range drives {
		if !written[d] {
			t.Fatalf("no shard write traced on %s: %v", d, written)
		}
	}
	if err := c.RemoveObject(t.Context(), "ecdata", "traced", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}

	// A flipped byte: read around, found only by a deep heal.
	p := shardFile(drives[2], ids[1])
	raw, _ := os.ReadFile(p)
	raw[len(raw)/2] ^= 0x10
	os.WriteFile(p, raw, 0o600)
	if err := readAll(); err != nil {
		t.Fatalf("with a corrupt shard: %v", err)
	}
	out := e.must("admin", "heal", "s1", "--scan", "--deep")
	if !strings.Contains(out, "Degraded:    1 blobs, 1 shards rebuilt") || !strings.Contains(out, "layout 2+2") {
		t.Fatalf("deep heal:\n%s", out)
	}

	// The drives keep their places and their number.
	proc.Kill(t)
	for _, list := range [][]string{{drives[1], drives[0], drives[2], drives[3]}, drives[:3]} {
		cmd := exec.Command(bin, "server", "--address", addr, "--dir", dir, "--drives", strings.Join(list, ","))
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err == nil || !(strings.Contains(string(out), "original order") || strings.Contains(string(out), "cannot start on 3")) {
			t.Fatalf("server on drives %v: %v\n%s", list, err, out)
		}
	}

	// An empty drive in place of drive 3: healed in the background.
	os.RemoveAll(drives[3])
	os.MkdirAll(drives[3], 0o700)
	proc = start(drives)
	testsite.Eventually(t, 30*time.Second, func() error {
		if got := len(shardIDs(t, drives[3])); got != len(ids) {
			return fmt.Errorf("drive 3 holds %d of %d shards", got, len(ids))
		}
		return nil
	})
	if err := readAll(); err != nil {
		t.Fatalf("after the background heal: %v", err)
	}

	// kill -9 under concurrent writers: every acknowledged object reads
	// back, and no shard of an unacknowledged one is left behind.
	acked := crashWriters(t, c, objects, proc)
	proc = start(drives)
	if err := readAll(); err != nil {
		t.Fatalf("after kill -9 (%d acknowledged writes): %v", acked, err)
	}
	rep = checkJSONStyle(t, e.must("admin", "heal", "s1", "--scan", "--dry-run", "--json"))[0]
	if rep["orphans"] != 0.0 || rep["degraded"] != 0.0 || rep["unanswered"] != 0.0 || rep["missingCount"] != 0.0 {
		t.Fatalf("after kill -9: %v", rep)
	}

	// Three shards of one object gone: it is lost, reported, never served.
	for _, d := range drives[:3] {
		os.Remove(shardFile(d, ids[2]))
	}
	var lost string
	for key := range objects {
		if _, err := getObject(t.Context(), c, "ecdata", key); err != nil {
			lost = key
			// Answered as an S3 error before any byte of the body.
			if resp := minio.ToErrorResponse(err); resp.StatusCode != 500 {
				t.Errorf("GET of the lost object: %v (status %d)", err, resp.StatusCode)
			}
		}
	}
	if lost == "" {
		t.Fatal("an object with 1 of 4 shards left was served")
	}
	if _, err := e.run("admin", "heal", "s1", "--scan"); err == nil || !strings.Contains(err.Error(), "1 blob files") {
		t.Fatalf("heal with a lost object: %v", err)
	}
	// With --json: one document, the report with the error in it (it
	// was the report and then a second, error document).
	out, err = e.run("admin", "heal", "s1", "--scan", "--json")
	docs := checkJSONStyle(t, out)
	if err == nil || len(docs) != 1 || docs[0]["status"] != "error" || docs[0]["missingCount"] != 1.0 ||
		!strings.Contains(fmt.Sprint(docs[0]["error"]), "1 blob files") {
		t.Fatalf("heal --json with a lost object: %v\n%s", err, out)
	}
	proc.Kill(t)
}

// crashWriters runs 4 writers of 256 KiB objects, kills the server with
// SIGKILL while they write, and adds the writes it acknowledged to
// objects; it returns how many there were.
func crashWriters(t *testing.T, c *minio.Client, objects map[string][]byte, proc *testsite.Process) int {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type ack struct {
		key  string
		body []byte
	}
	acks := make(chan ack, 10000)
	done := make(chan struct{})
	for w := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; ctx.Err() == nil; i++ {
				body := make([]byte, 256<<10)
				for j := range body {
					body[j] = byte(rng.Uint32())
				}
				key := fmt.Sprintf("crash/%d/%d", w, i)
				if _, err := c.PutObject(ctx, "ecdata", key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
					return
				}
				acks <- ack{key, body}
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond) // load, not an assertion
	proc.Kill(t)
	cancel()
	for range 4 {
		<-done
	}
	close(acks)
	n := 0
	for a := range acks {
		objects[a.key] = a.body
		n++
	}
	if n == 0 {
		t.Fatal("no write was acknowledged before the kill")
	}
	return n
}

// getObject reads bucket/key whole through c.
func getObject(ctx context.Context, c *minio.Client, bucket, key string) ([]byte, error) {
	obj, err := c.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	return io.ReadAll(obj)
}

// shardIDs lists the blob (or shard) files under dir/blobs.
func shardIDs(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "blobs", "??", "*"))
	var ids []string
	for _, f := range files {
		if n := filepath.Base(f); (len(n) == 32 || len(n) == 48) && !strings.Contains(n, ".") {
			ids = append(ids, filepath.Base(f))
		}
	}
	return ids
}

func shardFile(drive, id string) string { return filepath.Join(drive, "blobs", id[:2], id) }
