package objects

import (
	"bytes"
	"context"

	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/par"
)

// ReplicaItem is one received version for ApplyReplicas.
type ReplicaItem struct {
	Bucket, Key string
	Version     *Version
	// Data is its plaintext, the segments in order (nothing for a delete
	// marker). A small version's record keeps the slice itself (see
	// storeReplicaHeld): the caller must not change it afterwards.
	Data []byte
}

// ApplyReplicas applies received versions, each with the outcome
// ApplyReplica would give it, and commits the writes of all of them in one
// synced batch: one log write and one sync for the lot, instead of one
// commit per version. It takes every key's lock first, so each decision
// sees what the batch commits. A batch naming one key twice is applied one
// version after another instead, unsynced, so that each sees the one
// before; its caller syncs (synced false). out and errs hold one entry per
// item.
//
// A batch whose inline data or item count would make one commit larger
// than a metadata store takes in one transaction (etcd's request limit,
// 1.5 MiB by default when it runs apart from the site) is committed in
// parts, in order, each as above.
func (l *Layer) ApplyReplicas(ctx context.Context, items []ReplicaItem) (out []ApplyOutcome, errs []error, synced bool) {
	n := replicaCommitCut(items, l.cfg.InlineLimit)
	if n == len(items) {
		return l.applyReplicas(ctx, items)
	}
	out, errs, synced = l.applyReplicas(ctx, items[:n])
	o, e, s := l.ApplyReplicas(ctx, items[n:])
	return append(out, o...), append(errs, e...), synced && s
}

// At most this much inline data, and this many versions, go in one
// commit of ApplyReplicas.
const (
	maxReplicaCommitBytes = 1 << 20
	maxReplicaCommitItems = 256
)

// replicaCommitCut is how many of items go in the next commit: at least
// one, at most maxReplicaCommitItems, and no more inline data (that of
// items of at most inlineLimit bytes) than maxReplicaCommitBytes.
func replicaCommitCut(items []ReplicaItem, inlineLimit int64) int {
	var bytes int64
	for i, it := range items {
		if i == maxReplicaCommitItems {
			return i
		}
		if n := int64(len(it.Data)); n <= inlineLimit {
			if bytes += n; bytes > maxReplicaCommitBytes && i > 0 {
				return i
			}
		}
	}
	return len(items)
}

func (l *Layer) applyReplicas(ctx context.Context, items []ReplicaItem) (out []ApplyOutcome, errs []error, synced bool) {
	out = make([]ApplyOutcome, len(items))
	errs = make([]error, len(items))
	keys := make([]BucketKey, len(items))
	seen := make(map[BucketKey]bool, len(items))
	for i, it := range items {
		keys[i] = BucketKey{it.Bucket, it.Key}
		if seen[keys[i]] {
			for i, it := range items {
				out[i], errs[i] = l.ApplyReplicaSync(ctx, it.Bucket, it.Key, it.Version, bytes.NewReader(it.Data), false)
			}
			return out, errs, false
		}
		seen[keys[i]] = true
	}
	unlock := l.lockKeys(keys)
	defer unlock()
	pre, err := l.readReplicaState(items)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return out, errs, true
	}

	batch := l.meta.NewBatch()
	var (
		tallies  []keyTally
		staged   []int       // items whose writes are in batch
		newSegs  [][]Segment // by staged item: released if the batch fails
		replaced []*Version  // copies replaced: their segments go once it commits
		copies   []replicaData
	)
	for i, it := range items {
		in := it.Version
		if err := ValidateKey(it.Key); err != nil {
			errs[i] = err
			continue
		}
		if !validVersionID(in.VersionID) {
			errs[i] = ErrInvalidVersionID
			continue
		}
		b, err := l.Bucket(ctx, it.Bucket)
		if err != nil {
			errs[i] = err
			continue
		}
		l.cfg.Clock.Observe(max(in.ModTime, in.MetaTime))
		st := &pre[i]
		if st.err != nil {
			errs[i] = st.err
			continue
		}
		if l.refusesLateCopyAfter(it.Bucket, it.Key, in, st.purgedAt, st.purgedAs, st.purged) {
			out[i] = Stale // purged here: a peer's late copy does not bring it back
			continue
		}
		cur := st.cur
		if cur != nil {
			if o, done := compareCopies(cur, in); done {
				out[i] = o
				continue
			}
			if cur.ModTime == in.ModTime && cur.Origin == in.Origin && cur.ETag == in.ETag {
				// Same data, newer metadata: merge without touching the data.
				t, err := l.stageReplicaMeta(batch, it.Bucket, it.Key, cur, in)
				if err != nil {
					errs[i] = err
					continue
				}
				tallies = append(tallies, keyTally{it.Bucket, t})
				staged, newSegs = append(staged, i), append(newSegs, nil)
				continue
			}
		}
		copies = append(copies, replicaData{i: i, v: replicaCopy(in), cur: cur, b: b})
	}
	l.storeReplicas(items, copies, errs)
	for _, c := range copies {
		if errs[c.i] != nil {
			continue
		}
		it := items[c.i]
		t := stageReplicaOver(batch, it.Bucket, it.Key, c.v, c.cur, pre[c.i].latest)
		tallies = append(tallies, keyTally{it.Bucket, t})
		staged, newSegs = append(staged, c.i), append(newSegs, c.v.Segments)
		if c.cur != nil {
			replaced = append(replaced, c.cur)
		}
	}
	if len(staged) == 0 {
		return out, errs, true
	}
	if err := l.commitTallies(batch, tallies, true); err != nil {
		for n, i := range staged {
			l.release(newSegs[n]...)
			errs[i] = err
		}
		return out, errs, true
	}
	for _, cur := range replaced {
		l.release(cur.Segments...)
	}
	for _, i := range staged {
		out[i] = Applied
		l.notifyArrival(items[i].Bucket, items[i].Key)
	}
	return out, errs, true
}

// replicaState is what applyReplicas reads of a received version's key
// before it decides: the version's purge tombstone, its record here and
// the key's latest-version summary.
type replicaState struct {
	purged   bool
	purgedAt int64
	purgedAs PurgeKind
	cur      *Version // nil: not here
	latest   *latest  // nil: the key has no version
	err      error    // a record here that does not decode
}

// readReplicaState reads every item's replicaState in one read of the
// metadata store (meta.ViewMany): on a multi-node site one round trip to
// etcd for the batch, where three per version held the batch's key locks
// for hundreds of them. Where the store reads a key at a time (a local
// Pebble, no meta.MultiViewer), the versions are read after the rest, and
// only for the keys found to have a latest record: a key has one exactly
// while it has a version, so a new key's copy costs two lookups, not
// three. The caller holds the items' key locks, so nothing it reads
// changes before it commits.
func (l *Layer) readReplicaState(items []ReplicaItem) ([]replicaState, error) {
	pre := make([]replicaState, len(items))
	_, together := l.meta.(meta.MultiViewer)
	per := 2
	if together {
		per = 3
	}
	keys := make([][]byte, 0, per*len(items))
	for _, it := range items {
		keys = append(keys, purgedKey(it.Bucket, it.Key, it.Version.VersionID), latestKey(it.Bucket, it.Key))
		if together {
			keys = append(keys, versionKey(it.Bucket, it.Key, it.Version.VersionID))
		}
	}
	err := meta.ViewMany(l.meta, keys, func(n int, raw []byte, found bool) error {
		if !found {
			return nil
		}
		st := &pre[n/per]
		switch n % per {
		case 0:
			st.purgedAt, st.purgedAs, st.purged = decodePurged(raw)
		case 1:
			lat := &latest{}
			if err := decode(raw, lat); err != nil {
				st.err = err
				return nil
			}
			st.latest = lat
		default:
			st.readCurrent(raw)
		}
		return nil
	})
	if err != nil || together {
		return pre, err
	}
	var vkeys [][]byte
	var at []int
	for i, it := range items {
		if pre[i].latest != nil {
			vkeys, at = append(vkeys, versionKey(it.Bucket, it.Key, it.Version.VersionID)), append(at, i)
		}
	}
	err = meta.ViewMany(l.meta, vkeys, func(n int, raw []byte, found bool) error {
		if found {
			pre[at[n]].readCurrent(raw)
		}
		return nil
	})
	return pre, err
}

// readCurrent decodes raw as the stored copy of the version received.
func (st *replicaState) readCurrent(raw []byte) {
	v := &Version{}
	if err := decode(raw, v); err != nil {
		st.err = err
		return
	}
	st.cur = v
}

// replicaData is a received version whose data ApplyReplicas stores.
type replicaData struct {
	i   int // its item
	v   *Version
	cur *Version // the copy it replaces, if any
	b   Bucket
}

// replicaStoreWorkers bounds how many received versions' data a batch
// stores at once.
const replicaStoreWorkers = 32

// storeReplicas stores the data of copies, several at once: on a site
// whose data is coded across nodes each one is a round of shard writes
// and fsyncs, which a batch would otherwise pay one after another. Each
// copy's segments go in its v; a failure goes in errs at its item.
func (l *Layer) storeReplicas(items []ReplicaItem, copies []replicaData, errs []error) {
	// A panic is the caller's, as it was when the batch stored its copies
	// itself.
	par.Each(len(copies), replicaStoreWorkers, func(n int) {
		c := &copies[n]
		it := items[c.i]
		segs, held, err := l.storeReplicaHeld(it.Version, it.Data)
		if !held {
			segs, err = l.storeReplicaData(it.Bucket, it.Key, it.Version, bytes.NewReader(it.Data), c.b)
		}
		if c.v.Segments = segs; err != nil {
			errs[c.i] = err
		}
	})
}
