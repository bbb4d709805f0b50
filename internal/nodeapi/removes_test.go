package nodeapi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/blob"
)

// startRemovalNode starts a batchNode on a shard drive (small shards in
// its Pebble store, larger ones in files) holding n shards, small and
// large in turn, and returns their IDs.
func startRemovalNode(t *testing.T, noBatch bool, n int) (*batchNode, []string) {
	t.Helper()
	d, err := blob.NewShardDrive(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	node := startBatchNodeOn(t, d, noBatch)
	node.first.Store(true) // the writes are not held
	ids := make([]string, n)
	for i := range ids {
		size := 100
		if i%2 == 1 {
			size = blob.SmallShardMax + 1
		}
		ids[i] = putShard(t, node.d, bytes.Repeat([]byte{byte(i)}, size))
	}
	node.puts.Store(0)
	return node, ids
}

// removeShards removes each id at once through n, the first alone before
// the others (held by the node until they all wait), and returns each
// removal's error.
func removeShards(t *testing.T, n *batchNode, ids []string) []error {
	t.Helper()
	n.release = make(chan struct{})
	n.first.Store(false)
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = n.d.Remove(ids[0]) })
	waitQueued(t, &n.d.removals, 0) // the first is out, held by the node
	for i := 1; i < len(ids); i++ {
		wg.Go(func() { errs[i] = n.d.Remove(ids[i]) })
	}
	waitQueued(t, &n.d.removals, len(ids)-1)
	close(n.release)
	wg.Wait()
	return errs
}

// waitQueued waits until want calls wait in q behind the one out.
func waitQueued[T any](t *testing.T, q *queue[T], want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for q.queuedLen() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued, want %d", q.queuedLen(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// gone fails the test unless every id is gone from the node's drive.
func gone(t *testing.T, n *batchNode, ids []string) {
	t.Helper()
	for _, id := range ids {
		if r, err := n.d.Open(id); !errors.Is(err, blob.ErrNotFound) {
			if err == nil {
				r.Close()
			}
			t.Fatalf("shard %s after its removal: %v, want not found", id, err)
		}
	}
}

// TestShardRemovalsBatched: removals asked for while one is out go to the
// node together in one call; each is carried out (small shards and files
// alike), a shard already gone is no error, and an ID the node refuses
// fails alone.
func TestShardRemovalsBatched(t *testing.T) {
	n, ids := startRemovalNode(t, false, 20)
	ids = append(ids, blob.NewID()) // never written
	ids = append(ids, "not-an-id")
	errs := removeShards(t, n, ids)
	for i, err := range errs {
		if want := i == len(ids)-1; (err != nil) != want {
			t.Fatalf("removal %d (%s): %v (want an error: %v)", i, ids[i], err, want)
		}
	}
	if err := errs[len(ids)-1]; !errors.Is(err, errRefused) {
		t.Fatalf("an invalid ID's removal: %v, want refused", err)
	}
	if d, c, b := n.deletes.Load(), n.removalCalls.Load(), n.removalsBatched.Load(); d != 1 || c != 1 || b != int64(len(ids)-1) {
		t.Fatalf("%d DELETEs, %d removal calls of %d removals in all; want the first DELETE and one call of the %d others",
			d, c, b, len(ids)-1)
	}
	gone(t, n, ids[:len(ids)-1])
}

// TestShardRemovalsToANodeWithoutBatches: a node of an older build answers
// the removal call 404; the removals then go one request each, all carried
// out, and the next ones do so too without asking again for a while.
func TestShardRemovalsToANodeWithoutBatches(t *testing.T) {
	n, ids := startRemovalNode(t, true, 20)
	for round, part := range [][]string{ids[:10], ids[10:]} {
		for i, err := range removeShards(t, n, part) {
			if err != nil {
				t.Fatalf("round %d, removal %d: %v", round, i, err)
			}
		}
		if d, c := n.deletes.Load(), n.removalCalls.Load(); d != int64(10*(round+1)) || c != 1 {
			t.Fatalf("round %d: %d DELETEs and %d removal calls, want %d and only the one refused", round, d, c, 10*(round+1))
		}
		gone(t, n, part)
	}
}

// The removals body reads back as written, and a malformed one is refused
// with errBadRequest.
func TestParseRemovals(t *testing.T) {
	var body bytes.Buffer
	appendRemoval(&body, "a")
	appendRemoval(&body, "bc")
	ids, err := parseRemovals(&body)
	if err != nil || strings.Join(ids, ",") != "a,bc" {
		t.Fatalf("parseRemovals = %q, %v", ids, err)
	}
	var many bytes.Buffer
	for range removalBatch.items + 1 {
		appendRemoval(&many, "a")
	}
	for name, b := range map[string][]byte{
		"empty":    nil,
		"cut id":   {5, 'a'},
		"huge id":  binary.AppendUvarint(nil, maxIDLen+1),
		"bad len":  {0xff},
		"too many": many.Bytes(),
	} {
		if _, err := parseRemovals(bytes.NewReader(b)); !errors.Is(err, errBadRequest) {
			t.Errorf("%s: %v, want errBadRequest", name, err)
		}
	}
}

func FuzzParseRemovals(f *testing.F) {
	var body bytes.Buffer
	appendRemoval(&body, "a")
	appendRemoval(&body, "bc")
	f.Add(body.Bytes())
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		ids, err := parseRemovals(bytes.NewReader(b))
		if err != nil {
			return
		}
		var again bytes.Buffer
		for _, id := range ids {
			appendRemoval(&again, id)
		}
		back, err := parseRemovals(&again)
		if err != nil || !slices.Equal(back, ids) {
			t.Fatalf("re-encoded removals: %q, %v; want %q", back, err, ids)
		}
	})
}
