package nodeapi

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/twinlake/twinlake/internal/blob"
)

// Batched shard removals. A delete removes an object's shard from every
// node, and under concurrent deletes (a DeleteObjects request deletes in
// lanes, a purge, lifecycle expiry) each removal was a request of its own:
// the requests, not the removals, were most of what a shard removal cost
// the leader and the node. A Drive sends one removal request at a time per
// node; the removals asked for meanwhile go together in the next
// (POST DRIVE/removes), which the node carries out at once (their syncs
// shared) and answers shard by shard. Each removal is acknowledged only
// once durable, as a DELETE of its own is.

// pathRemovals is a drive's batched shard removals.
const pathRemovals = "removes"

// removalBatch bounds a batch of removals (the bytes are the IDs').
var removalBatch = batchLimits{items: 64, bytes: 64 * maxIDLen}

// maxIDLen bounds a shard ID in a batch body.
const maxIDLen = 256

// maxRemovalsBody bounds what a node reads of one batch of removals.
const maxRemovalsBody = 64 * (maxIDLen + binary.MaxVarintLen64)

// Remove implements blob.Drive: the removal goes alone, or with the others
// asked for while one is out to the node.
func (d *Drive) Remove(id string) error {
	return d.removals.run(id, len(id), removalBatch, func(batch []*queued[string], solo bool) {
		sendBatched(&d.removals, batch, solo, d.postRemovals, d.removeOne)
	})
}

// removeOne removes shard id in a request of its own.
func (d *Drive) removeOne(id string) error {
	return d.call(http.MethodDelete, d.path+pathShards+id, nil, nil, nil)
}

// postRemovals sends removals in one call and sets each one's err from
// the node's answer.
func (d *Drive) postRemovals(removals []*queued[string]) error {
	var body bytes.Buffer
	for _, r := range removals {
		appendRemoval(&body, r.item)
	}
	var a batchAnswer
	err := d.call(http.MethodPost, d.path+pathRemovals, &body, nil, func(resp *http.Response) error {
		return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&a)
	})
	switch {
	case errors.Is(err, blob.ErrNotFound):
		return fmt.Errorf("%w: %v", errNoBatch, err)
	case err != nil:
		return err
	}
	if len(a.Status) != len(removals) || len(a.Error) != len(removals) {
		return fmt.Errorf("node %s: removals answer for %d shards, %d sent", d.base, len(a.Status), len(removals))
	}
	for i, r := range removals {
		r.err = shardError(d.base, r.item, a.Status[i], a.Error[i])
	}
	return nil
}

// appendRemoval adds shard id to a batch body: its length as a uvarint,
// then the ID.
func appendRemoval(buf *bytes.Buffer, id string) {
	buf.Write(binary.AppendUvarint(nil, uint64(len(id))))
	buf.WriteString(id)
}

// parseRemovals reads a batch of removals: each shard ID after its length
// as a uvarint, at most removalBatch.items of them.
func parseRemovals(r io.Reader) ([]string, error) {
	br := bufio.NewReader(io.LimitReader(r, maxRemovalsBody+1))
	var ids []string
	for {
		if _, err := br.Peek(1); errors.Is(err, io.EOF) {
			break
		}
		if len(ids) == removalBatch.items {
			return nil, fmt.Errorf("%w: more than %d removals", errBadRequest, removalBatch.items)
		}
		id, err := readField(br, maxIDLen)
		if err != nil {
			return nil, fmt.Errorf("%w: removal %d: %v", errBadRequest, len(ids), err)
		}
		ids = append(ids, string(id))
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: no removals", errBadRequest)
	}
	return ids, nil
}

// removeBatch removes a batch's shards from d, all at once so that their
// syncs are shared, and answers each one's outcome: a removal refused or
// failed fails alone.
func (s *Server) removeBatch(d blob.Drive, w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		return errNoRoute
	}
	ids, err := parseRemovals(r.Body)
	if err != nil {
		return err
	}
	return answerEach(s, w, ids, http.StatusNoContent, "node api: batched removal", func(id string) string { return id }, d.Remove)
}
