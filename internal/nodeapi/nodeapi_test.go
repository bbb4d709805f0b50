package nodeapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/erasure"
	"github.com/twinlake/twinlake/internal/netcut"
	"github.com/twinlake/twinlake/internal/trace"
)

var secret = []byte("node-secret-for-tests")

// node is a drive served over the node API on a fixed loopback address,
// so that it can stop and come back where the others reach it.
type node struct {
	t    *testing.T
	dir  string
	addr string
	srv  *http.Server
}

func startNode(t *testing.T, dir, addr string) *node {
	t.Helper()
	return startTracedNode(t, addr, nil, dir)
}

// startTracedNode starts a node of drives in dirs that publish on bus.
func startTracedNode(t *testing.T, addr string, bus *trace.Bus, dirs ...string) *node {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var drives []blob.Drive
	for _, dir := range dirs {
		ld, err := blob.NewLocalDrive(dir)
		if err != nil {
			t.Fatal(err)
		}
		drives = append(drives, blob.TracedDrive(ld, bus))
	}
	h, err := NewServer(drives, secret, bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, dir: dirs[0], addr: ln.Addr().String(), srv: &http.Server{Handler: h}}
	go n.srv.Serve(ln)
	t.Cleanup(n.stop)
	return n
}

// putShard writes a new shard of body to d and returns its ID.
func putShard(t *testing.T, d blob.Drive, body []byte) string {
	t.Helper()
	id := blob.NewID()
	w, err := d.Create(id)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(body)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return id
}

func (n *node) stop() { n.srv.Close() }

func (n *node) drive(t *testing.T) *Drive {
	t.Helper()
	d, err := NewDrive("http://"+n.addr, 0, secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.timeout = 5 * time.Second
	return d
}

// TestDriveConformance: a drive on another node behaves as a local one.
func TestDriveConformance(t *testing.T) {
	local, err := blob.NewLocalDrive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	remote := startNode(t, t.TempDir(), "127.0.0.1:0").drive(t)
	for name, d := range map[string]blob.Drive{"local": local, "remote": remote} {
		t.Run(name, func(t *testing.T) { driveContract(t, d) })
	}
}

func driveContract(t *testing.T, d blob.Drive) {
	id := blob.NewID()
	data := bytes.Repeat([]byte("shard bytes "), 50000)
	w, err := d.Create(id)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data[:1000])
	w.Write(data[1000:])
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if w, err := d.Create(id); err == nil {
		if err := w.Commit(); err == nil {
			t.Fatal("a second Create of the same shard succeeded")
		}
	}
	r, err := d.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Size() != int64(len(data)) {
		t.Fatalf("size %d, want %d", r.Size(), len(data))
	}
	p := make([]byte, 100)
	if n, err := r.ReadAt(p, 12345); n != 100 || err != nil || !bytes.Equal(p, data[12345:12445]) {
		t.Fatalf("ReadAt: %d %v", n, err)
	}
	if n, err := r.ReadAt(p, int64(len(data)-40)); n != 40 || !errors.Is(err, io.EOF) {
		t.Fatalf("ReadAt at the end: %d %v", n, err)
	}
	r.Close()

	rw, err := d.Rewrite(id)
	if err != nil {
		t.Fatal(err)
	}
	rw.Write([]byte("new"))
	rw.Abort()
	if r, err := d.Open(id); err != nil || r.Size() != int64(len(data)) {
		t.Fatalf("an aborted rewrite changed the shard: %v", err)
	}
	rw, _ = d.Rewrite(id)
	rw.Write([]byte("new"))
	if err := rw.Commit(); err != nil {
		t.Fatal(err)
	}
	if r, err := d.Open(id); err != nil || r.Size() != 3 {
		t.Fatalf("rewrite: %v (size %d)", err, r.Size())
	} else if n, err := r.ReadAt(p[:3], 0); n != 3 || err != nil || string(p[:3]) != "new" {
		t.Fatalf("ReadAt of the rewritten shard: %d %v %q", n, err, p[:n])
	} else if n, err := r.ReadAt(p[:3], 1); n != 2 || !errors.Is(err, io.EOF) || string(p[:2]) != "ew" {
		t.Fatalf("ReadAt past the end of the rewritten shard: %d %v", n, err)
	}
	aborted := blob.NewID()
	aw, _ := d.Create(aborted)
	aw.Write([]byte("half"))
	aw.Abort()
	// The node drops an aborted upload when it sees the cut stream,
	// which may come just after Abort returns here.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := d.Open(aborted)
		if errors.Is(err, blob.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("aborted shard: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if ids, err := d.List(id[:2]); err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("list: %v %v", ids, err)
	}
	if _, err := d.List("zz"); err == nil {
		t.Fatal("list of a bad fan-out accepted")
	}
	if _, err := d.ReadMark(); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("mark of a new drive: %v", err)
	}
	if err := d.WriteMark([]byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	if m, err := d.ReadMark(); err != nil || string(m) != `{"x":1}` {
		t.Fatalf("mark %q %v", m, err)
	}
	if err := d.Remove(id); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(id); err != nil {
		t.Fatalf("removing a missing shard: %v", err)
	}
	if _, err := d.Open(id); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("open removed: %v", err)
	}
	if _, err := d.Open("../../etc/passwd"); err == nil {
		t.Fatal("a path outside the drive was opened")
	}
}

// TestDriveSetAcrossNodes: a blob coded across this node's drive and
// three other nodes' reads and writes with one node down, and the node's
// shards are rebuilt when it is back.
func TestDriveSetAcrossNodes(t *testing.T) {
	local, _ := blob.NewLocalDrive(t.TempDir())
	nodes := []*node{startNode(t, t.TempDir(), "127.0.0.1:0"), startNode(t, t.TempDir(), "127.0.0.1:0"), startNode(t, t.TempDir(), "127.0.0.1:0")}
	drives := []blob.Drive{local, nodes[0].drive(t), nodes[1].drive(t), nodes[2].drive(t)}
	set, err := blob.NewDriveSet(drives, erasure.MinBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := set.Claim("dep"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	data := make([]byte, 9*erasure.MinBlockSize+77)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	write := func(b []byte) string {
		w, err := set.Create()
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		id, err := w.Commit()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	read := func(id string) []byte {
		f, err := set.Open(id)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		got, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	a := write(data)
	if !bytes.Equal(read(a), data) {
		t.Fatal("read back differs")
	}

	nodes[1].stop()
	if !bytes.Equal(read(a), data) {
		t.Fatal("read with a node down differs")
	}
	b := write(data[:5000]) // 3 of 4 shards: the write quorum
	if !bytes.Equal(read(b), data[:5000]) {
		t.Fatal("write with a node down reads back wrong")
	}

	nodes[1] = startNode(t, nodes[1].dir, nodes[1].addr)
	for _, id := range []string{a, b} {
		res, err := set.Heal(id, false, false)
		if id == a && (err != nil || len(res.Bad) != 0) {
			t.Fatalf("heal of a blob written before the node went: %+v %v", res, err)
		}
		if id == b && (err != nil || fmt.Sprint(res.Bad) != "[2]" || res.Rebuilt != 1) {
			t.Fatalf("heal of a blob written while it was down: %+v %v", res, err)
		}
	}
	nodes[0].stop()
	nodes[2].stop()
	if !bytes.Equal(read(b), data[:5000]) {
		t.Fatal("the rebuilt shard does not read back")
	}
	// A shard to another node fails as it streams, not at Create: the
	// write is refused by the time it would be acknowledged.
	w, err := set.Create()
	if err == nil {
		w.Write(data)
		_, err = w.Commit()
	}
	if !errors.Is(err, erasure.ErrWriteQuorum) {
		t.Fatalf("write with 2 of 4 nodes: %v", err)
	}
}

// TestAuth: unsigned, wrongly signed, stale and replayed calls are
// refused.
func TestAuth(t *testing.T) {
	n := startNode(t, t.TempDir(), "127.0.0.1:0")
	url := "http://" + n.addr + drivePath(0) + pathList + "ab"
	try := func(mut func(r *http.Request)) int {
		r, _ := http.NewRequest(http.MethodGet, url, nil)
		sign(secret, r, time.Now())
		mut(r)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := try(func(*http.Request) {}); got != http.StatusOK {
		t.Fatalf("signed call: %d", got)
	}
	for name, mut := range map[string]func(r *http.Request){
		"unsigned":     func(r *http.Request) { r.Header.Del("Authorization") },
		"other secret": func(r *http.Request) { sign([]byte("another-secret-of-16+"), r, time.Now()) },
		"stale":        func(r *http.Request) { sign(secret, r, time.Now().Add(-10*time.Minute)) },
		"replayed elsewhere": func(r *http.Request) {
			r.URL.Path = drivePath(0) + pathList + "cd"
		},
	} {
		if got := try(mut); got != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, got)
		}
	}
	if _, err := NewServer(nil, []byte("short"), nil, nil); err == nil {
		t.Fatal("a short secret accepted")
	}
}

func FuzzParseRange(f *testing.F) {
	f.Add("bytes=0-10", int64(100))
	f.Add("bytes=5-", int64(10))
	f.Fuzz(func(t *testing.T, h string, size int64) {
		off, n, err := parseRange(h, size)
		if err == nil && (off < 0 || n < 1 || off+n > size) {
			t.Fatalf("%q of %d: %d+%d", h, size, off, n)
		}
	})
}

// TestHungNodeCostsOneShard: a node that takes a shard upload and then
// stops reading (hung, not dead) is given up after the stall bound; the
// write completes on the other shards within the write quorum.
func TestHungNodeCostsOneShard(t *testing.T) {
	release := make(chan struct{})
	hung := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, drivePath(0)+pathShards) {
			<-release // never reads the body, never answers
			return
		}
		w.WriteHeader(http.StatusNotFound)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hung.Serve(ln)
	t.Cleanup(func() { close(release); hung.Close() })
	hd, _ := NewDrive("http://"+ln.Addr().String(), 0, secret, nil)
	hd.stall = 300 * time.Millisecond
	local, _ := blob.NewLocalDrive(t.TempDir())
	n1, n2 := startNode(t, t.TempDir(), "127.0.0.1:0"), startNode(t, t.TempDir(), "127.0.0.1:0")
	set, err := blob.NewDriveSet([]blob.Drive{local, n1.drive(t), n2.drive(t), hd}, erasure.MinBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("hung node "), 400000) // 4 MB: more than the socket buffers hold
	w, err := set.Create()                             // without the stall bound, this write never ends
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	id, err := w.Commit()
	if err != nil {
		t.Fatalf("write with one hung node: %v", err)
	}
	f, err := set.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
}

// TestTraceStream: a node streams its storage events to another node,
// each with the node's name, the shard and its bytes, filtered as asked.
func TestTraceStream(t *testing.T) {
	bus := trace.New("node-b")
	n := startTracedNode(t, "127.0.0.1:0", bus, t.TempDir())
	d := n.drive(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events, err := d.Trace(ctx, trace.Filter{Types: trace.Storage, FuncName: "storage.*Shard"})
	if err != nil {
		t.Fatal(err)
	}
	id := putShard(t, d, make([]byte, 1000))
	if _, err := d.ReadMark(); !errors.Is(err, blob.ErrNotFound) { // filtered out by name
		t.Fatal(err)
	}
	if err := d.Remove(id); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 2 {
		select {
		case ev := <-events:
			if ev.Node != "node-b" || ev.Type != trace.Storage || !strings.HasSuffix(ev.Path, "/"+id) {
				t.Fatalf("event %+v", ev)
			}
			if ev.FuncName == "storage.WriteShard" && ev.BytesIn != 1000 {
				t.Fatalf("write event %+v", ev)
			}
			got = append(got, ev.FuncName)
		case <-time.After(10 * time.Second):
			t.Fatalf("events so far %v", got)
		}
	}
	if !slices.Equal(got, []string{"storage.WriteShard", "storage.RemoveShard"}) {
		t.Fatalf("events %v", got)
	}
	// A bad filter is refused; the stream ends when the caller goes away.
	if _, err := d.do(ctx, http.MethodGet, pathTrace+"?types=x", nil, nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("bad filter: %v", err)
	}
	cancel()
	for range events {
	}
}

// TestServesEveryDrive: a node serves each of its drives under its index;
// a shard written to one lands on that drive only, and an index the node
// does not have, or spelled otherwise, is no route.
func TestServesEveryDrive(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	base := "http://" + startTracedNode(t, "127.0.0.1:0", nil, dirs...).addr
	for i := range dirs {
		d, err := NewDrive(base, i, secret, nil)
		if err != nil {
			t.Fatal(err)
		}
		id := putShard(t, d, fmt.Appendf(nil, "drive %d", i))
		for j, dir := range dirs {
			_, err := os.Stat(filepath.Join(dir, "blobs", id[:2], id))
			if (err == nil) != (i == j) {
				t.Errorf("shard written to drive %d: on drive %d %v", i, j, err == nil)
			}
		}
	}
	for _, path := range []string{drivePath(2) + pathMark, pathDrives + "01/" + pathMark, pathDrives + "-1/" + pathMark, Prefix + pathMark} {
		r, _ := http.NewRequest(http.MethodGet, base+path, nil)
		sign(secret, r, time.Now())
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, resp.StatusCode)
		}
	}
	if _, err := NewServer(nil, secret, nil, nil); err == nil {
		t.Fatal("a node with no drive accepted")
	}
}

// countingTransport counts the requests it carries.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// TestSmallShardOneRequest: a shard of at most wholeShard bytes is
// opened and read in one request; a larger one's size comes first and
// each read is a request of its own; a node that wants a range on every
// GET (as before whole reads) is asked the size with a HEAD.
func TestSmallShardOneRequest(t *testing.T) {
	n := startNode(t, t.TempDir(), "127.0.0.1:0")
	ct := &countingTransport{}
	d, err := NewDrive("http://"+n.addr, 0, secret, &http.Client{Transport: ct})
	if err != nil {
		t.Fatal(err)
	}
	small := bytes.Repeat([]byte("s"), wholeShard)
	large := bytes.Repeat([]byte("l"), wholeShard+1)
	smallID, largeID := putShard(t, d, small), putShard(t, d, large)
	read := func(d *Drive, id string, want []byte) int64 {
		t.Helper()
		before := ct.n.Load()
		r, err := d.Open(id)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		got := make([]byte, r.Size())
		for off := 0; off < len(got); off += 40000 {
			if _, err := r.ReadAt(got[off:min(off+40000, len(got))], int64(off)); err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("shard %s read back wrong", id)
		}
		return ct.n.Load() - before
	}
	if got := read(d, smallID, small); got != 1 {
		t.Fatalf("a shard of %d bytes took %d requests, want 1", len(small), got)
	}
	if got := read(d, largeID, large); got != 1+2 {
		t.Fatalf("a shard of %d bytes read in 2 parts took %d requests, want 3", len(large), got)
	}

	// A node that answers a GET without a range 400, as one from before.
	h, err := NewServer([]blob.Drive{mustLocal(t, n.dir)}, secret, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Range") == "" && strings.Contains(r.URL.Path, pathShards) {
			writeError(w, http.StatusBadRequest, errBadRequest)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer old.Close()
	od, err := NewDrive(old.URL, 0, secret, &http.Client{Transport: ct})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(od, smallID, small); got != 1+1+2 {
		t.Fatalf("a shard from an older node took %d requests, want the refused GET, a HEAD and 2 reads", got)
	}
	if _, err := od.Open(blob.NewID()); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("a missing shard on an older node: %v", err)
	}
}

func mustLocal(t *testing.T, dir string) blob.Drive {
	t.Helper()
	d, err := blob.NewLocalDrive(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSmallShardGoesWhole: a shard of at most blob.SmallShardMax bytes reaches
// the node as one request of known length, written in pieces or not; a
// larger one streams (chunked). Both arrive whole.
func TestSmallShardGoesWhole(t *testing.T) {
	ld, err := blob.NewLocalDrive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inner, err := NewServer([]blob.Drive{ld}, secret, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		length  int64
		chunked bool
	}
	var mu sync.Mutex
	var puts []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			mu.Lock()
			puts = append(puts, seen{r.ContentLength, slices.Contains(r.TransferEncoding, "chunked")})
			mu.Unlock()
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	d, err := NewDrive(srv.URL, 0, secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		size int
		want seen
	}{
		{1, seen{1, false}},
		{3000, seen{3000, false}},
		{blob.SmallShardMax, seen{blob.SmallShardMax, false}},
		{blob.SmallShardMax + 1, seen{-1, true}},
		{1 << 20, seen{-1, true}},
	} {
		data := make([]byte, tc.size)
		for i := range data {
			data[i] = byte(i * 7)
		}
		id := blob.NewID()
		w, err := d.Create(id)
		if err != nil {
			t.Fatal(err)
		}
		for p := data; len(p) > 0; { // in pieces, as the erasure writer does
			k := min(len(p), 1000)
			if _, err := w.Write(p[:k]); err != nil {
				t.Fatal(err)
			}
			p = p[k:]
		}
		if err := w.Commit(); err != nil {
			t.Fatalf("%d bytes: %v", tc.size, err)
		}
		mu.Lock()
		got := puts[len(puts)-1]
		mu.Unlock()
		if got != tc.want {
			t.Fatalf("a shard of %d bytes reached the node with length %d, chunked %t; want %+v", tc.size, got.length, got.chunked, tc.want)
		}
		r, err := d.Open(id)
		if err != nil {
			t.Fatal(err)
		}
		back := make([]byte, tc.size)
		if n, err := r.ReadAt(back, 0); n != tc.size || (err != nil && !errors.Is(err, io.EOF)) || !bytes.Equal(back, data) {
			t.Fatalf("%d bytes read back: %d, %v", tc.size, n, err)
		}
		r.Close()
	}
}

// TestHungNodeSmallShard: a node that never answers a small shard's
// request costs the upload the stall bound, not more.
func TestHungNodeSmallShard(t *testing.T) {
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	t.Cleanup(func() { close(release); hung.Close() })
	hd, _ := NewDrive(hung.URL, 0, secret, nil)
	hd.stall = 300 * time.Millisecond
	w, _ := hd.Create(blob.NewID())
	w.Write([]byte("small"))
	start := time.Now()
	if err := w.Commit(); !errors.Is(err, errStalled) {
		t.Fatalf("commit to a hung node: %v, want errStalled", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("gave up after %v, want about the stall bound", took)
	}
}

// TestProcess: a node tells the CPU time its process has used, which
// grows as it works, and only to a caller that signs with the secret.
func TestProcess(t *testing.T) {
	n := startNode(t, t.TempDir(), "127.0.0.1:0")
	d, err := NewDrive("http://"+n.addr, 0, secret, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	first, err := d.Process(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if first.CPUSeconds <= 0 || first.PeakRSSBytes < 1<<20 {
		t.Fatalf("cpuSeconds %v, peakRSSBytes %v", first.CPUSeconds, first.PeakRSSBytes)
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	second, err := d.Process(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if second.CPUSeconds <= first.CPUSeconds {
		t.Errorf("cpuSeconds %v after %v, want more", second.CPUSeconds, first.CPUSeconds)
	}
	wrong, err := NewDrive("http://"+n.addr, 0, []byte("another-secret-of-enough-length"), http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wrong.Process(t.Context()); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("wrong secret: %v, want 403", err)
	}
	if first.Routing != (Routing{}) {
		t.Errorf("a node that passes no requests tells routing %+v", first.Routing)
	}

	// A node that passes requests to a leader tells what it holds and
	// whom it deposed, as they are when asked.
	ld, err := blob.NewLocalDrive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewServer([]blob.Drive{ld}, secret, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var held atomic.Int64
	h.SetRouting(func() Routing { return Routing{HeldRequests: held.Load(), LeadersDeposed: 2} })
	srv := httptest.NewServer(h)
	defer srv.Close()
	routed, err := NewDrive(srv.URL, 0, secret, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []int64{0, 7} {
		held.Store(want)
		p, err := routed.Process(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if p.Routing != (Routing{HeldRequests: want, LeadersDeposed: 2}) || p.CPUSeconds <= 0 {
			t.Errorf("process %+v, want %d held, 2 deposed and the CPU time", p, want)
		}
	}
}

// TestUnreachableNodeNotReached: calls to a node whose address takes no
// connection (its machine down: netcut), or refuses them (its process
// gone), fail with errors the drive set takes for no answer from the
// drive (blob.NotReached), which keep its hung mark; a node that answers
// (here: no such shard) does not.
func TestUnreachableNodeNotReached(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	refusing, _ := NewDrive("http://"+addr, 0, secret, nil)
	if _, err := refusing.Open(blob.NewID()); !blob.NotReached(err) {
		t.Errorf("open on a node that refuses connections: %v, want one NotReached takes", err)
	}
	release, err := netcut.Hold(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	client := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{Timeout: 200 * time.Millisecond}).DialContext}}
	down, _ := NewDrive("http://"+addr, 0, secret, client)
	if _, err := down.Open(blob.NewID()); !blob.NotReached(err) {
		t.Errorf("open on a node whose connections time out: %v, want one NotReached takes", err)
	}
	if _, err := down.ReadMark(); !blob.NotReached(err) {
		t.Errorf("mark read on a node whose connections time out: %v, want one NotReached takes", err)
	}
	d := startNode(t, t.TempDir(), "127.0.0.1:0").drive(t)
	if _, err := d.Open(blob.NewID()); err == nil || blob.NotReached(err) {
		t.Errorf("open of a missing shard on a node that answers: %v, want an error NotReached does not take", err)
	}
}
