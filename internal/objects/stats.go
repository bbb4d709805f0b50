package objects

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/twinlake/twinlake/internal/meta"
)

// CellsPerBucket is how many stats cells a bucket's digest and usage
// counters are spread over. A key's cell is its key hash modulo this, so
// its digest slot is its cell modulo DigestSlots. Writers of keys in
// different cells never wait for one another; more cells than slots keep
// two concurrent writers of one bucket from meeting in a cell.
const CellsPerBucket = 4 * DigestSlots

// cellOf returns the stats cell of an object key.
func cellOf(key string) int { return int(keyHash(key) % CellsPerBucket) }

// cell is one stored stats cell: the XOR of the version hashes of every
// version whose key falls in it, and the live objects (latest version not
// a delete marker) and their bytes.
type cell struct {
	digest  uint64
	objects int64
	bytes   int64
}

func (c cell) encode() []byte {
	b := make([]byte, 24)
	binary.BigEndian.PutUint64(b[0:], c.digest)
	binary.BigEndian.PutUint64(b[8:], uint64(c.objects))
	binary.BigEndian.PutUint64(b[16:], uint64(c.bytes))
	return b
}

func decodeCell(b []byte) (cell, error) {
	if len(b) != 24 {
		return cell{}, errors.New("objects: stats cell is not 24 bytes")
	}
	return cell{
		digest:  binary.BigEndian.Uint64(b[0:]),
		objects: int64(binary.BigEndian.Uint64(b[8:])),
		bytes:   int64(binary.BigEndian.Uint64(b[16:])),
	}, nil
}

func errBadCell(k []byte) error { return fmt.Errorf("objects: bad stats cell %q", k) }

// add folds a change into the cell.
func (c *cell) add(t tally) {
	c.digest ^= t.digest
	c.objects += t.objects
	c.bytes += t.bytes
}

// tally is what one metadata batch changes in one key's stats cell: the
// versions it adds or removes (each toggles the digest) and the change of
// the key's latest version.
type tally struct {
	key            string
	digest         uint64
	objects, bytes int64
	// base is the earliest modification time among the versions toggled,
	// from which lifecycle rules count (0: none).
	base int64
}

// version toggles v (added or removed) in the digest; v may be nil.
func (t *tally) version(v *Version) {
	if v != nil {
		t.digest ^= versionHash(t.key, v)
		if t.base == 0 || v.ModTime < t.base {
			t.base = v.ModTime
		}
	}
}

// latest accounts for the key's latest version changing from old to new
// (either may be nil).
func (t *tally) latest(old, new *latest) {
	if old != nil && !old.DeleteMarker {
		t.objects--
		t.bytes -= old.Size
	}
	if new != nil && !new.DeleteMarker {
		t.objects++
		t.bytes += new.Size
	}
}

func (t *tally) empty() bool { return t.digest == 0 && t.objects == 0 && t.bytes == 0 }

// cellLocks serialise the read-modify-write of one stats cell from its read
// to the commit of the batch that carries it. They are striped by cell key:
// two writers wait for each other only when their keys share a cell (or a
// stripe), never because they write the same bucket.
type cellLocks struct {
	seed    maphash.Seed
	stripes [4096]sync.Mutex
}

func (c *cellLocks) lock(cellKey []byte) func() {
	mu := &c.stripes[c.stripe(cellKey)]
	mu.Lock()
	return mu.Unlock
}

func (c *cellLocks) stripe(cellKey []byte) int {
	return int(maphash.Bytes(c.seed, cellKey) % uint64(len(c.stripes)))
}

// cellCacheMax bounds the stats cells cellCache holds; a full cache starts
// again empty.
const cellCacheMax = 1 << 16

// cellCache holds the stats cells this layer last committed, so that a
// write's read-modify-write of its cell need not read it from the
// metadata store first: on a multi-node site that read is a round to etcd
// on every write. It is sound because this layer is the only writer of
// the cells (a multi-node site's leader is: its commits are fenced, and a
// new leader starts a new layer with an empty cache), every change of a
// cell is made by commit or commitTallies under the cell's stripe lock,
// which keep the cache in step, and a commit that fails (whose outcome
// may be unknown) forgets the cell. The rest (a bucket's deletion, the
// upgrade) clears it.
type cellCache struct {
	mu sync.Mutex
	m  map[string]cell
}

func (c *cellCache) get(ck []byte) (cell, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[string(ck)]
	return v, ok
}

func (c *cellCache) put(ck []byte, v cell) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= cellCacheMax {
		c.m = make(map[string]cell)
	}
	c.m[string(ck)] = v
}

func (c *cellCache) forget(ck []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, string(ck))
}

func (c *cellCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = nil
}

// lockAll locks the stripes of several cells, each once, in stripe order,
// so two holders of several never wait for each other in a cycle; a
// holder of one stripe (lock) never waits for another while holding it.
func (c *cellLocks) lockAll(cellKeys [][]byte) func() {
	stripes := make([]int, len(cellKeys))
	for i, ck := range cellKeys {
		stripes[i] = c.stripe(ck)
	}
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, s := range stripes {
		c.stripes[s].Lock()
	}
	return func() {
		for _, s := range stripes {
			c.stripes[s].Unlock()
		}
	}
}

// commit commits batch, with bucket's stats cell of t.key updated by t in
// the same batch, so that the stored digest and counters change exactly
// when the versions do. The caller holds the key's lock.
func (l *Layer) commit(batch meta.Batch, bucket string, t *tally, sync bool) error {
	if t.key != "" && t.base != 0 {
		l.scheduleLifecycle(batch, bucket, t.key, t.base)
	}
	if t.empty() {
		return l.commitPlain(batch, sync)
	}
	ck := cellKey(bucket, cellOf(t.key))
	defer l.cells.lock(ck)()
	c, err := l.readCell(ck)
	if err != nil {
		return err
	}
	c.add(*t)
	if c == (cell{}) {
		batch.Delete(ck)
	} else {
		batch.Set(ck, c.encode())
	}
	if err := l.commitPlain(batch, sync); err != nil {
		l.cellCache.forget(ck)
		return err
	}
	l.cellCache.put(ck, c)
	return nil
}

// keyTally is one key's tally in a batch of several keys.
type keyTally struct {
	bucket string
	t      tally
}

// commitTallies is commit for a batch changing several keys, each with its
// tally: the keys' cells are read and written under their locks, taken in
// one order, with tallies of keys sharing a cell added together. The
// caller holds every key's lock.
func (l *Layer) commitTallies(batch meta.Batch, ts []keyTally, sync bool) error {
	sums := map[string]cell{}
	for _, kt := range ts {
		if kt.t.key != "" && kt.t.base != 0 {
			l.scheduleLifecycle(batch, kt.bucket, kt.t.key, kt.t.base)
		}
		if kt.t.empty() {
			continue
		}
		ck := string(cellKey(kt.bucket, cellOf(kt.t.key)))
		c := sums[ck]
		c.add(kt.t)
		sums[ck] = c
	}
	cks := make([][]byte, 0, len(sums))
	for ck := range sums {
		cks = append(cks, []byte(ck))
	}
	defer l.cells.lockAll(cks)()
	for _, ck := range cks {
		c, err := l.readCell(ck)
		if err != nil {
			return err
		}
		d := sums[string(ck)]
		c.digest ^= d.digest
		c.objects += d.objects
		c.bytes += d.bytes
		sums[string(ck)] = c
		if c == (cell{}) {
			batch.Delete(ck)
		} else {
			batch.Set(ck, c.encode())
		}
	}
	if err := l.commitPlain(batch, sync); err != nil {
		for _, ck := range cks {
			l.cellCache.forget(ck)
		}
		return err
	}
	for _, ck := range cks {
		l.cellCache.put(ck, sums[string(ck)])
	}
	return nil
}

// commitPlain commits a batch that changes no stats cell.
func (l *Layer) commitPlain(batch meta.Batch, sync bool) error {
	if err := batch.Commit(sync); err != nil {
		return err
	}
	l.crashPoint("commit")
	return nil
}

// readCell reads a stats cell, from the cache when this layer committed
// it last. The caller holds the cell's stripe lock.
func (l *Layer) readCell(ck []byte) (cell, error) {
	if c, ok := l.cellCache.get(ck); ok {
		return c, nil
	}
	raw, err := l.meta.Get(ck)
	if errors.Is(err, meta.ErrNotFound) {
		return cell{}, nil
	}
	if err != nil {
		return cell{}, err
	}
	c, err := decodeCell(raw)
	if err != nil {
		return cell{}, errBadCell(ck)
	}
	return c, nil
}

// Usage is the site's live data: objects whose latest version is not a
// delete marker, and their bytes.
type Usage struct {
	Objects int64
	Bytes   int64
}

// Usage returns the site's live object count and bytes, summed from the
// stored stats cells (at most CellsPerBucket per bucket, whatever the
// buckets hold) in one consistent snapshot. A read error is logged and
// reported as zero usage.
func (l *Layer) Usage() Usage {
	u, err := l.usage(context.Background())
	if err != nil {
		l.log.Error("read usage counters", "err", err)
	}
	return u
}

func (l *Layer) usage(context.Context) (Usage, error) {
	return l.sumCells([]byte(pfxCell))
}

// sumCells adds up the live objects and bytes of the stats cells under
// prefix: every bucket's, or one bucket's.
func (l *Layer) sumCells(prefix []byte) (Usage, error) {
	var u Usage
	err := meta.Scan(l.meta, prefix, meta.PrefixEnd(prefix), func(k, raw []byte) (bool, error) {
		c, err := decodeCell(raw)
		if err != nil {
			return false, errBadCell(k)
		}
		u.Objects += c.objects
		u.Bytes += c.bytes
		return true, nil
	})
	if err != nil {
		return Usage{}, err
	}
	return u, nil
}
