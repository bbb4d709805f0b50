package objects

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/meta"
)

// Blob intents. A blob file that no metadata references is found from an
// intent record, never by walking the blob tree:
//
//   - before a blob file is created, a synced intent o/i/<blobID> names it;
//   - the batch that first references the blob (a version or a part)
//     deletes the intent;
//   - a batch that drops the last reference to a blob (a version removed or
//     replaced, a part replaced, an upload completed or aborted) writes the
//     intent again, and the file is removed once that batch is durable;
//   - the intent is deleted only after its file is removed durably.
//
// So at any instant every blob file is referenced by committed metadata or
// named by an intent, and opening the layer removes the files of the
// remaining intents (a crash between a blob's fsync and its commit, or
// between a commit and a removal): the cost of recovery is the writes that
// were in flight, not the objects stored.

// storeBlob writes r to a new blob of object bucket/key (which places its
// shards on a drive set) under a durable intent.
func (l *Layer) storeBlob(seg *Segment, r io.Reader, bucket, key string) error {
	id := blob.NewPlacedID(bucket, key)
	if err := l.intents.write(l, id); err != nil {
		return err
	}
	w, err := l.blobs.CreateAs(id)
	if err != nil {
		l.clearIntents(id)
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Abort()
		l.clearIntents(id)
		return err
	}
	if _, err := w.Commit(); err != nil {
		l.clearIntents(id)
		return err
	}
	l.crashPoint("blob")
	seg.BlobID = id
	return nil
}

// adopt deletes, in the batch that references segs, their blobs' intents.
func adopt(batch meta.Batch, segs ...Segment) {
	for _, s := range segs {
		if s.BlobID != "" {
			batch.Delete(intentKey(s.BlobID))
		}
	}
}

// disown writes, in the batch that drops the last reference to segs,
// intents for their blobs; release removes them once it is durable.
func disown(batch meta.Batch, segs ...Segment) {
	for _, s := range segs {
		if s.BlobID != "" {
			batch.Set(intentKey(s.BlobID), nil)
		}
	}
}

// release removes the blobs of segs, which committed metadata does not
// reference (never adopted, or disowned by a committed batch), then their
// intents. A failure leaves the intent, so the next open retries.
func (l *Layer) release(segs ...Segment) {
	var ids []string
	for _, s := range segs {
		if s.BlobID == "" {
			continue
		}
		if err := l.blobs.Remove(s.BlobID); err != nil {
			l.log.Warn("remove blob", "blob", s.BlobID, "err", err)
			continue
		}
		l.crashPoint("removed")
		ids = append(ids, s.BlobID)
	}
	l.clearIntents(ids...)
}

// clearIntents deletes intents whose files are gone. It is not synced: an
// intent that outlives a crash only makes the next open remove a missing
// file.
func (l *Layer) clearIntents(ids ...string) {
	if len(ids) == 0 {
		return
	}
	batch := l.meta.NewBatch()
	for _, id := range ids {
		batch.Delete(intentKey(id))
	}
	if err := l.commitPlain(batch, false); err != nil {
		l.log.Warn("clear blob intents", "blobs", len(ids), "err", err)
	}
}

// recoverIntents removes the blob file of every remaining intent, then the
// intents. It runs when the layer opens, before it serves, so no write is
// in flight and every intent names an unreferenced blob.
func (l *Layer) recoverIntents() error {
	var ids []string
	err := meta.Scan(l.meta, []byte(pfxIntent), meta.PrefixEnd([]byte(pfxIntent)), func(k, _ []byte) (bool, error) {
		ids = append(ids, string(k[len(pfxIntent):]))
		return true, nil
	})
	if err != nil || len(ids) == 0 {
		return err
	}
	batch := l.meta.NewBatch()
	for _, id := range ids {
		if err := l.blobs.Remove(id); err != nil {
			return err
		}
		batch.Delete(intentKey(id))
	}
	if err := batch.Commit(true); err != nil {
		return err
	}
	l.log.Info("removed unreferenced blob files left by an interrupted write", "files", len(ids))
	return nil
}

// crashPoint calls the test hook, which may panic to stop the layer at
// this point as a crash would.
func (l *Layer) crashPoint(name string) {
	if l.hook != nil {
		l.hook(name)
	}
}

// intentGroup commits the intents of concurrent blob writes together: the
// intents that arrive while one commit is in flight go in the next one, a
// synced commit for the lot (a group commit), instead of one each. On a
// multi-node site each commit is an etcd transaction, a round of
// consensus.
type intentGroup struct {
	mu    sync.Mutex
	cond  *sync.Cond // signalled when a commit ends
	busy  bool       // a commit is in flight
	queue []*intentReq
}

type intentReq struct {
	ids  []string
	done bool
	err  error
}

// errIntentCommitAborted is a grouped intent's error when the commit
// carrying it panicked.
var errIntentCommitAborted = errors.New("objects: intent commit aborted")

// write makes the intents of blobs ids durable, in a commit shared with
// those of the writes waiting at the same time.
func (g *intentGroup) write(l *Layer, ids ...string) error {
	r := &intentReq{ids: ids}
	g.mu.Lock()
	if g.cond == nil {
		g.cond = sync.NewCond(&g.mu)
	}
	g.queue = append(g.queue, r)
	for g.busy && !r.done {
		g.cond.Wait()
	}
	if r.done {
		g.mu.Unlock()
		return r.err
	}
	// This write leads the next commit: every intent queued so far.
	g.busy = true
	reqs := g.queue
	g.queue = nil
	g.mu.Unlock()
	var err error = errIntentCommitAborted
	defer func() {
		g.mu.Lock()
		for _, q := range reqs {
			q.done, q.err = true, err
		}
		g.busy = false
		g.cond.Broadcast()
		g.mu.Unlock()
	}()
	batch := l.meta.NewBatch()
	for _, q := range reqs {
		for _, id := range q.ids {
			batch.Set(intentKey(id), nil)
		}
	}
	err = l.commitPlain(batch, true)
	return err
}

// An ElsewhereBody is a write's body that another process holds and can
// write to the layer's blob store itself: a node of a multi-node site that
// received the request offers to. Read, it is the body as any other (the
// offer declined).
type ElsewhereBody interface {
	io.Reader
	// CanStore reports whether StoreAs can write the body as blobs
	// blobs, encrypted or not; when it cannot, the layer reads it.
	CanStore(blobs int, encrypted bool) bool
	// StoreAs writes the body to new blobs, one after another, hashing
	// each with its MD5 and algs, and reports what it wrote to each; the
	// blobs are durable at the store's write quorum when it returns
	// without error, and the body has ended with the last of them. On
	// an error, shards of any of them may have been written.
	StoreAs(blobs []ElsewhereBlob, algs []checksum.Algorithm) ([]StoredElsewhere, error)
}

// ElsewhereBlob is one blob an ElsewhereBody writes: the next Size bytes
// of the body, or all the rest when Size is negative. With a DataKey, what
// it writes is those bytes encrypted under that key, as the layer's
// Cipher.Encrypt does; the hashes and size reported are the plaintext's.
type ElsewhereBlob struct {
	ID      string
	Size    int64
	DataKey []byte
}

// StoredElsewhere is what an ElsewhereBody wrote to a blob.
type StoredElsewhere struct {
	Size int64                         `json:"size"`
	MD5  string                        `json:"md5"` // hex
	Sums map[checksum.Algorithm]string `json:"sums,omitempty"`
}

// storeElsewhere has body write the data of object bucket/key to new blobs
// under durable intents, as storeBlob does here, one for each of blobs,
// whose IDs it sets, and returns what was written to each.
func (l *Layer) storeElsewhere(body ElsewhereBody, bucket, key string, blobs []ElsewhereBlob, algs []checksum.Algorithm) ([]StoredElsewhere, error) {
	segs := make([]Segment, len(blobs))
	ids := make([]string, len(blobs))
	for i := range blobs {
		blobs[i].ID = blob.NewPlacedID(bucket, key)
		ids[i], segs[i].BlobID = blobs[i].ID, blobs[i].ID
	}
	if err := l.intents.write(l, ids...); err != nil {
		return nil, err
	}
	got, err := body.StoreAs(blobs, algs)
	if err == nil && len(got) != len(blobs) {
		err = fmt.Errorf("objects: a body stored elsewhere as %d blobs came back with %d", len(blobs), len(got))
	}
	for i := range got {
		if err == nil && got[i].MD5 == "" {
			err = errors.New("objects: a body stored elsewhere came back without its MD5")
		}
		for _, alg := range algs {
			if err == nil && got[i].Sums[alg] == "" {
				err = fmt.Errorf("objects: a body stored elsewhere came back without its %s", alg)
			}
		}
	}
	if err != nil {
		l.release(segs...) // their shards, whatever was written, then the intents
		return nil, err
	}
	l.crashPoint("blob")
	return got, nil
}
