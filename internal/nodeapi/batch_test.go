package nodeapi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/blob"
)

// batchNode serves a local drive behind a handler that holds the first
// shard request until release is closed and counts the PUTs, DELETEs,
// batch calls and removal batch calls it serves; noBatch makes it answer
// both batch calls as a node without them does.
type batchNode struct {
	d                     *Drive
	release               chan struct{}
	puts, batches         atomic.Int64
	batchedShards         atomic.Int64
	deletes, removalCalls atomic.Int64
	removalsBatched       atomic.Int64
	first                 atomic.Bool
	noBatch               bool
}

func startBatchNode(t *testing.T, noBatch bool) *batchNode {
	t.Helper()
	return startBatchNodeOn(t, mustLocal(t, t.TempDir()), noBatch)
}

// startBatchNodeOn is startBatchNode serving drive.
func startBatchNodeOn(t *testing.T, drive blob.Drive, noBatch bool) *batchNode {
	t.Helper()
	inner, err := NewServer([]blob.Drive{drive}, secret, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := &batchNode{release: make(chan struct{}), noBatch: noBatch}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.first.CompareAndSwap(false, true) {
			<-n.release
		}
		switch r.Method {
		case http.MethodPut:
			n.puts.Add(1)
		case http.MethodDelete:
			n.deletes.Add(1)
		case http.MethodPost:
			removals := strings.HasSuffix(r.URL.Path, "/"+pathRemovals)
			if removals {
				n.removalCalls.Add(1)
			} else {
				n.batches.Add(1)
			}
			if n.noBatch {
				writeError(w, http.StatusNotFound, errNoRoute)
				return
			}
			body, _ := io.ReadAll(r.Body)
			if removals {
				ids, _ := parseRemovals(bytes.NewReader(body))
				n.removalsBatched.Add(int64(len(ids)))
			} else {
				items, _ := parseBatch(bytes.NewReader(body))
				n.batchedShards.Add(int64(len(items)))
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	if n.d, err = NewDrive(srv.URL, 0, secret, nil); err != nil {
		t.Fatal(err)
	}
	return n
}

// queued waits until want shards wait behind the one in flight.
func (n *batchNode) queued(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := n.d.batch.queuedLen()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d shards queued, want %d", got, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// writeShards writes a shard of body i for each id at once, the first
// alone before the others, and returns each one's Commit error.
func writeShards(t *testing.T, n *batchNode, ids []string) []error {
	t.Helper()
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	write := func(i int) {
		w, err := n.d.Create(ids[i])
		if err == nil {
			w.Write(fmt.Appendf(nil, "shard %d %s", i, bytes.Repeat([]byte("x"), 3000)))
			err = w.Commit()
		}
		errs[i] = err
	}
	wg.Go(func() { write(0) })
	n.queued(t, 0) // the first is in flight, held by the node
	for i := 1; i < len(ids); i++ {
		wg.Go(func() { write(i) })
	}
	n.queued(t, len(ids)-1)
	close(n.release)
	wg.Wait()
	return errs
}

// TestSmallShardsBatched: small shards written while another is in flight
// reach the node together in one batch call, each is durable and reads
// back, and one the node refuses (its ID taken) fails alone.
func TestSmallShardsBatched(t *testing.T) {
	n := startBatchNode(t, false)
	taken := putShardAfter(t, n)
	ids := newIDs(40)
	ids[7] = taken
	errs := writeShards(t, n, ids)
	for i, err := range errs {
		if (err != nil) != (i == 7) {
			t.Fatalf("shard %d: %v (want an error for the taken ID only)", i, err)
		}
	}
	if p, b, s := n.puts.Load(), n.batches.Load(), n.batchedShards.Load(); p != 2 || b != 1 || s != 39 {
		t.Fatalf("%d PUTs, %d batches of %d shards in all; want the taken ID's and the first PUT, one batch of the 39 others", p, b, s)
	}
	for i, id := range ids {
		if i == 7 {
			continue
		}
		r, err := n.d.Open(id)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, r.Size())
		if _, err := r.ReadAt(got, 0); err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		r.Close()
		if want := fmt.Appendf(nil, "shard %d %s", i, bytes.Repeat([]byte("x"), 3000)); !bytes.Equal(got, want) {
			t.Fatalf("shard %d read back wrong", i)
		}
	}
}

// putShardAfter writes one shard through n before any test shard, and
// returns its ID.
func putShardAfter(t *testing.T, n *batchNode) string {
	t.Helper()
	n.first.Store(true) // not held
	id := putShard(t, n.d, []byte("already there"))
	n.first.Store(false)
	return id
}

// TestSmallShardsToANodeWithoutBatches: a node of an older build answers
// the batch call 404; the shards then go one request each, all durable,
// and the next ones do so too without asking again for a while.
func TestSmallShardsToANodeWithoutBatches(t *testing.T) {
	n := startBatchNode(t, true)
	for round, wantPuts := range []int64{10, 20} {
		if round > 0 {
			n.release = make(chan struct{})
			n.first.Store(false)
		}
		ids := newIDs(10)
		for i, err := range writeShards(t, n, ids) {
			if err != nil {
				t.Fatalf("round %d, shard %d: %v", round, i, err)
			}
		}
		if p, b := n.puts.Load(), n.batches.Load(); p != wantPuts || b != 1 {
			t.Fatalf("round %d: %d PUTs and %d batch calls, want %d and only the one refused", round, p, b, wantPuts)
		}
		for _, id := range ids {
			r, err := n.d.Open(id)
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
		}
	}
}

// newIDs returns k new shard IDs.
func newIDs(k int) []string {
	ids := make([]string, k)
	for i := range ids {
		ids[i] = blob.NewID()
	}
	return ids
}

// The batch body reads back as written, and a malformed one is refused
// with errBadRequest.
func TestParseBatch(t *testing.T) {
	var body bytes.Buffer
	appendBatchShard(&body, "a", false, []byte("one"))
	appendBatchShard(&body, "b", true, nil)
	items, err := parseBatch(&body)
	if err != nil || len(items) != 2 || items[0].id != "a" || items[0].rewrite || string(items[0].data) != "one" ||
		items[1].id != "b" || !items[1].rewrite || len(items[1].data) != 0 {
		t.Fatalf("parseBatch = %+v, %v", items, err)
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"bad mode":  {'x', 1, 'a', 0},
		"cut id":    {'c', 5, 'a'},
		"cut data":  {'c', 1, 'a', 9, 'z'},
		"huge id":   binary.AppendUvarint([]byte{'c'}, 1000),
		"huge data": binary.AppendUvarint([]byte{'c', 1, 'a'}, blob.SmallShardMax+1),
		"no length": {'c'},
	} {
		if _, err := parseBatch(bytes.NewReader(b)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	var many bytes.Buffer
	for range batchMaxShards + 1 {
		appendBatchShard(&many, "a", false, nil)
	}
	if _, err := parseBatch(&many); !errors.Is(err, errBadRequest) {
		t.Errorf("%d shards: %v", batchMaxShards+1, err)
	}
}

func FuzzParseBatch(f *testing.F) {
	var body bytes.Buffer
	appendBatchShard(&body, "a", false, []byte("one"))
	appendBatchShard(&body, "b", true, nil)
	f.Add(body.Bytes())
	f.Add([]byte{'c', 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := parseBatch(bytes.NewReader(b))
		if err != nil {
			return
		}
		var again bytes.Buffer
		for _, it := range items {
			appendBatchShard(&again, it.id, it.rewrite, it.data)
		}
		back, err := parseBatch(&again)
		if err != nil || len(back) != len(items) {
			t.Fatalf("re-encoded batch: %d items, %v; want %d", len(back), err, len(items))
		}
	})
}
