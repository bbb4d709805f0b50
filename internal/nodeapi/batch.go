package nodeapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/twinlake/twinlake/internal/blob"
)

// Batched small shards. Under concurrent writes a leader sends every
// other node one small shard per object, each in a request of its own:
// the requests, not the bytes, were most of what a small PUT cost the
// nodes that take its shards. A Drive sends one small shard at a time
// per node; the small shards of other writes that wait meanwhile go
// together in the next request (POST DRIVE/batch), which the node
// commits at once (their syncs shared) and answers shard by shard. A
// shard waits for no timer: alone, it goes as before, in a PUT of its
// own. Each shard is acknowledged only once the node has made it
// durable, as a PUT of its own is.

// Bounds of one batch: a shard larger than batchShardMax goes alone, and
// a batch carries at most batchMaxShards shards and batchMaxBytes of data.
const (
	batchShardMax  = 32 << 10
	batchMaxShards = 64
	batchMaxBytes  = 1 << 20
)

// pathBatch is a drive's batched shard writes.
const pathBatch = "batch"

// batchRetry is how long a Drive sends its shards one at a time after a
// node answered that it has no batch call (an older build), before it
// tries a batch again.
const batchRetry = time.Minute

// batchShard is one small shard to write: its ID, whether it replaces
// one, and its bytes.
type batchShard struct {
	id      string
	rewrite bool
	data    []byte
}

// shardBatch bounds a batch of small shards.
var shardBatch = batchLimits{items: batchMaxShards, bytes: batchMaxBytes}

// sendSmall sends a held shard of at most batchShardMax bytes, alone or in
// a batch with others, and returns once the node has made it durable.
func (d *Drive) sendSmall(id string, rewrite bool, data []byte) error {
	s := batchShard{id: id, rewrite: rewrite, data: data}
	return d.batch.run(s, len(data), shardBatch, func(batch []*queued[batchShard], solo bool) {
		sendBatched(&d.batch, batch, solo, d.postBatch, func(s batchShard) error {
			return d.sendWhole(d.shardPath(s.id, s.rewrite), s.data)
		})
	})
}

// errNoBatch is a node's answer that it has no batch call.
var errNoBatch = errors.New("the node has no batch call")

// batchAnswer is a node's answer to a batch: per shard, in order, the
// status a PUT of its own would have had and its error.
type batchAnswer struct {
	Status []int    `json:"status"`
	Error  []string `json:"error"`
}

// postBatch sends shards in one batch call, its answer awaited for the
// stall bound, and sets each shard's err from the node's answer.
func (d *Drive) postBatch(shards []*queued[batchShard]) error {
	var body bytes.Buffer
	for _, s := range shards {
		appendBatchShard(&body, s.item.id, s.item.rewrite, s.item.data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.stall)
	defer cancel()
	resp, err := d.do(ctx, http.MethodPost, d.path+pathBatch, &body, nil)
	switch {
	case errors.Is(err, blob.ErrNotFound):
		return fmt.Errorf("%w: %v", errNoBatch, err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %v", errStalled, err)
	case err != nil:
		return err
	}
	defer resp.Body.Close()
	var a batchAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&a); err != nil {
		return fmt.Errorf("node %s: batch answer: %w", d.base, err)
	}
	if len(a.Status) != len(shards) || len(a.Error) != len(shards) {
		return fmt.Errorf("node %s: batch answer for %d shards, %d sent", d.base, len(a.Status), len(shards))
	}
	for i, s := range shards {
		s.err = shardError(d.base, s.item.id, a.Status[i], a.Error[i])
	}
	return nil
}

// shardError is a batched shard's error from the status and message a
// node answered for it, as do makes one of a PUT's answer.
func shardError(base, id string, status int, msg string) error {
	if status/100 == 2 {
		return nil
	}
	return statusError(fmt.Errorf("node %s: batched shard %s: %d %s", base, id, status, msg), status)
}

// The batch body is each shard in turn: a mode byte ('c' create, 'r'
// rewrite), then its ID and its bytes, each after its length as a
// uvarint.
func appendBatchShard(buf *bytes.Buffer, id string, rewrite bool, data []byte) {
	mode := byte('c')
	if rewrite {
		mode = 'r'
	}
	buf.WriteByte(mode)
	buf.Write(binary.AppendUvarint(nil, uint64(len(id))))
	buf.WriteString(id)
	buf.Write(binary.AppendUvarint(nil, uint64(len(data))))
	buf.Write(data)
}

// batchItem is one shard of a batch as a node reads it.
type batchItem struct {
	id      string
	rewrite bool
	data    []byte
}

// maxBatchBody bounds what a node reads of one batch: the shards, and
// their IDs and lengths, of the largest batch a Drive sends.
const maxBatchBody = batchMaxBytes + batchShardMax + batchMaxShards*256

// parseBatch reads a batch body of at most maxBatchBody bytes and
// batchMaxShards shards.
func parseBatch(r io.Reader) ([]batchItem, error) {
	br := bufio.NewReader(io.LimitReader(r, maxBatchBody+1))
	var items []batchItem
	total := 0
	for {
		mode, err := br.ReadByte()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if mode != 'c' && mode != 'r' {
			return nil, fmt.Errorf("%w: shard %d: mode %q", errBadRequest, len(items), mode)
		}
		if len(items) == batchMaxShards {
			return nil, fmt.Errorf("%w: more than %d shards", errBadRequest, batchMaxShards)
		}
		id, err := readField(br, 256)
		if err != nil {
			return nil, fmt.Errorf("%w: shard %d: id: %v", errBadRequest, len(items), err)
		}
		data, err := readField(br, blob.SmallShardMax)
		if err != nil {
			return nil, fmt.Errorf("%w: shard %d: data: %v", errBadRequest, len(items), err)
		}
		if total += len(id) + len(data); total > maxBatchBody {
			return nil, fmt.Errorf("%w: more than %d bytes", errBadRequest, maxBatchBody)
		}
		items = append(items, batchItem{id: string(id), rewrite: mode == 'r', data: data})
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: an empty batch", errBadRequest)
	}
	return items, nil
}

// readField reads a uvarint length of at most limit and that many bytes.
func readField(br *bufio.Reader, limit uint64) ([]byte, error) {
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%d bytes, at most %d", n, limit)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(br, b); err != nil {
		return nil, err
	}
	return b, nil
}

// putBatch writes a batch's shards to d, all at once so that their syncs
// are shared, and answers each one's outcome: a shard refused or failed
// fails alone.
func (s *Server) putBatch(d blob.Drive, w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		return errNoRoute
	}
	items, err := parseBatch(r.Body)
	if err != nil {
		return err
	}
	return answerEach(s, w, items, http.StatusOK, "node api: batched shard", func(it batchItem) string { return it.id },
		func(it batchItem) error { return writeShard(d, it.id, it.rewrite, it.data) })
}

// answerEach runs do on every item of a batch at once, so that their
// syncs are shared, and answers each one's outcome in order (batchAnswer):
// ok, or the status and error a call of its own would have had; an item
// refused or failed fails alone. A failure of the node's own (500) is
// logged as what, with the item's id.
func answerEach[T any](s *Server, w http.ResponseWriter, items []T, ok int, what string, id func(T) string, do func(T) error) error {
	a := batchAnswer{Status: make([]int, len(items)), Error: make([]string, len(items))}
	var wg sync.WaitGroup
	for i, it := range items {
		wg.Go(func() {
			if err := do(it); err != nil {
				a.Status[i], a.Error[i] = statusOf(err), err.Error()
				if a.Status[i] == http.StatusInternalServerError {
					s.log.Warn(what, "id", id(it), "err", err)
				}
				return
			}
			a.Status[i] = ok
		})
	}
	wg.Wait()
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(a)
}

// writeShard writes shard id (rewrite: its replacement) of data to d and
// commits it.
func writeShard(d blob.Drive, id string, rewrite bool, data []byte) error {
	sw, err := openShard(d, id, rewrite)
	if err != nil {
		return err
	}
	if _, err := sw.Write(data); err != nil {
		sw.Abort()
		return err
	}
	return sw.Commit()
}
