package objects

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/meta"
)

// Replicator is told of every local change, inside the batch that commits
// it, so that the change and its outbound replication work are durable
// together. Changes applied from a peer (ApplyReplica, ApplyPurge,
// ApplyBucket) are never reported: received copies are not sent on.
type Replicator interface {
	// Version is called for a new local version or delete marker, and for a
	// metadata change of one, before v is encoded: it may set v.Targets and
	// add journal entries to b.
	Version(b meta.Batch, bucket, key string, v *Version)
	// Purge is called when a version is removed permanently; how says
	// what the sites that apply it are to remove (PurgeVersion, or
	// PurgeExpiredMarker for a lifecycle's removal of an expired object
	// delete marker).
	Purge(b meta.Batch, bucket, key string, v *Version, how PurgeKind)
	// Bucket is called when a bucket is created or changed (deleted false)
	// or deleted (deleted true), before the record is encoded (it may
	// enable versioning); at is the change's HLC time.
	Bucket(b meta.Batch, bk *Bucket, deleted bool, at int64)
	// RequiresVersioning reports that versioning may not be suspended.
	RequiresVersioning() bool
	// Committed is called after such a batch is durable.
	Committed()
}

// SetReplicator installs r (nil removes it). Call it before serving.
func (l *Layer) SetReplicator(r Replicator) { l.repl = r }

// SetArrivalObserver installs fn, called after a version received from a
// peer is committed (ApplyReplica or ApplyPurge that applied something).
// The Tables replica's scanner follows arrivals this way. Call it before
// serving; fn must not block.
func (l *Layer) SetArrivalObserver(fn func(bucket, key string)) { l.arrived = fn }

func (l *Layer) notifyArrival(bucket, key string) {
	if l.arrived != nil {
		l.arrived(bucket, key)
	}
}

func (l *Layer) replVersion(b meta.Batch, bucket, key string, v *Version) {
	if l.repl != nil {
		l.repl.Version(b, bucket, key, v)
	}
}

func (l *Layer) replPurge(b meta.Batch, bucket, key string, v *Version, how PurgeKind) {
	if l.repl != nil {
		l.repl.Purge(b, bucket, key, v, how)
	}
}

func (l *Layer) replBucket(b meta.Batch, bk *Bucket, deleted bool, at int64) {
	if l.repl != nil {
		l.repl.Bucket(b, bk, deleted, at)
	}
}

func (l *Layer) replCommitted() {
	if l.repl != nil {
		l.repl.Committed()
	}
}

// ApplyOutcome says what the receiver did with a version from a peer.
type ApplyOutcome int

// Outcomes of ApplyReplica and ApplyPurge.
const (
	// Applied: the version was stored (or its metadata merged).
	Applied ApplyOutcome = iota
	// Duplicate: the same version at the same time is already here.
	Duplicate
	// Stale: a newer copy of the same version is already here.
	Stale
)

func (o ApplyOutcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Duplicate:
		return "duplicate"
	case Stale:
		return "stale"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// ApplyReplica stores a version received from a peer, keeping its version
// ID, times, origin and part layout; body holds its plaintext data, the
// segments in order (nothing for a delete marker or a metadata-only
// change). The timestamp decides: a copy of a version already here is
// accepted when newer (its metadata merged), accepted idempotently when
// equal, and rejected as Stale when older. The key's latest version is the
// newest by (ModTime, origin, version ID), whatever the arrival order. The
// stored copy is marked REPLICA and is never reported to the Replicator.
func (l *Layer) ApplyReplica(ctx context.Context, bucket, key string, in *Version, body io.Reader) (ApplyOutcome, error) {
	return l.ApplyReplicaSync(ctx, bucket, key, in, body, true)
}

// ApplyReplicaSync is ApplyReplica; with sync false the metadata commit is
// not synced, for a caller applying several versions that syncs the last
// one (Pebble's log is sequential, so that makes every earlier one durable)
// before acknowledging any.
func (l *Layer) ApplyReplicaSync(ctx context.Context, bucket, key string, in *Version, body io.Reader, sync bool) (ApplyOutcome, error) {
	if err := ValidateKey(key); err != nil {
		return 0, err
	}
	if !validVersionID(in.VersionID) {
		return 0, ErrInvalidVersionID
	}
	b, err := l.Bucket(ctx, bucket)
	if err != nil {
		return 0, err
	}
	l.cfg.Clock.Observe(max(in.ModTime, in.MetaTime))
	if l.refusesLateCopy(bucket, key, in) {
		io.Copy(io.Discard, body)
		return Stale, nil // purged here: a peer's late copy does not bring it back
	}
	cur, err := l.getVersion(bucket, key, in.VersionID)
	if err != nil && !errors.Is(err, ErrVersionNotFound) {
		return 0, err
	}
	if cur != nil {
		if out, done := compareCopies(cur, in); done {
			io.Copy(io.Discard, body)
			return out, nil
		}
		if cur.ModTime == in.ModTime && cur.Origin == in.Origin && cur.ETag == in.ETag {
			// Same data, newer metadata: merge without touching the data.
			io.Copy(io.Discard, body)
			return l.mergeReplicaMeta(bucket, key, in)
		}
	}
	v := replicaCopy(in)
	segs, err := l.storeReplicaData(bucket, key, in, body, b)
	if err != nil {
		return 0, err
	}
	v.Segments = segs
	unlock := l.lockKey(bucket, key)
	defer unlock()
	// Re-check under the lock: another copy, or the version's purge from
	// another peer, may have landed meanwhile.
	if l.refusesLateCopy(bucket, key, in) {
		l.release(segs...)
		return Stale, nil
	}
	if cur, err = l.getVersion(bucket, key, in.VersionID); err != nil && !errors.Is(err, ErrVersionNotFound) {
		l.release(segs...)
		return 0, err
	}
	if cur != nil {
		if out, done := compareCopies(cur, in); done {
			l.release(segs...)
			return out, nil
		}
	}
	if err := l.putReplicaLocked(bucket, key, v, cur, sync); err != nil {
		l.release(segs...)
		return 0, err
	}
	l.notifyArrival(bucket, key)
	return Applied, nil
}

// compareCopies decides between the local copy cur and an incoming copy of
// the same version: done reports that nothing is to be written.
func compareCopies(cur, in *Version) (ApplyOutcome, bool) {
	ct, cm := cur.Stamp()
	it, im := in.Stamp()
	switch {
	case it < ct || it == ct && im < cm:
		return Stale, true
	case it == ct && im == cm && in.Origin <= cur.Origin:
		if in.Origin == cur.Origin {
			return Duplicate, true
		}
		return Stale, true
	}
	return Applied, false
}

// replicaCopy is the record stored for a received version.
func replicaCopy(in *Version) *Version {
	v := *in
	v.Targets = nil
	v.ReplicaStatus = StatusReplica
	v.ReplicaTimestamp = time.Now().UnixNano()
	v.ActivityTimestamp = 0
	v.Segments = nil
	return &v
}

// replicaDigest is the MD5 a received segment s of in must have: its part
// ETag, or the object's ETag for a single-part object; "" when unknown.
func replicaDigest(in *Version, s Segment) string {
	if !in.Multipart {
		return in.ETag
	}
	return s.ETag
}

// storeReplicaHeld is storeReplicaData for a version whose data the caller
// holds whole in data and gives to the record: one plaintext segment small
// enough to keep inline, which the record then keeps as data itself, not a
// copy (the caller must not change data afterwards). ok is false when the
// version is not such a one, and storeReplicaData is to store it.
func (l *Layer) storeReplicaHeld(in *Version, data []byte) (segs []Segment, ok bool, err error) {
	if in.DeleteMarker || in.SSE != "" || len(in.KeyCheck) > 0 || len(in.Segments) != 1 {
		return nil, false, nil
	}
	s := in.Segments[0]
	if s.Size != int64(len(data)) || s.Size > l.cfg.InlineLimit {
		return nil, false, nil
	}
	if err := l.room(s.Size); err != nil {
		return nil, true, err
	}
	hs, err := checksum.NewSet()
	if err != nil {
		return nil, true, err
	}
	hs.Write(data)
	md5Hex, _ := hs.Sum()
	if want := replicaDigest(in, s); want != "" && md5Hex != want {
		return nil, true, fmt.Errorf("%w: segment 0", ErrBadDigest)
	}
	return []Segment{{Number: s.Number, Size: s.Size, ETag: s.ETag, Checksum: s.Checksum, Inline: data}}, true, nil
}

// storeReplicaData writes the incoming plaintext as segments with the
// sender's sizes (so a multipart object keeps its part layout), encrypting
// with this site's keys when the version is encrypted, and checks each
// segment's MD5 against its part ETag (or the object's ETag).
func (l *Layer) storeReplicaData(bucket, key string, in *Version, body io.Reader, b Bucket) ([]Segment, error) {
	if in.DeleteMarker {
		return nil, nil
	}
	if in.SSE != "" && l.cfg.Cipher == nil {
		return nil, ErrSSEUnavailable
	}
	if len(in.KeyCheck) > 0 {
		return l.storeCustomerReplica(bucket, key, in, body)
	}
	enc, err := l.encryptionFor(bucket, key, in.SSE, nil)
	if err != nil {
		return nil, err
	}
	if eb, ok := body.(ElsewhereBody); ok && len(in.Segments) > 1 && eb.CanStore(len(in.Segments), enc != nil) &&
		!slices.ContainsFunc(in.Segments, func(s Segment) bool { return s.Size <= l.cfg.InlineLimit }) {
		return l.storeReplicaElsewhere(bucket, key, in, eb, enc)
	}
	var segs []Segment
	for i, s := range in.Segments {
		var data io.Reader = io.LimitReader(body, s.Size)
		if eb, ok := body.(ElsewhereBody); ok && len(in.Segments) == 1 {
			data = eb // the whole body: the node that received it may write it
		}
		st, err := l.store(bucket, key, data, s.Size, enc, "")
		if err != nil {
			l.release(segs...)
			return nil, err
		}
		if want := replicaDigest(in, s); want != "" && st.md5 != want {
			l.release(append(segs, st.seg)...)
			return nil, fmt.Errorf("%w: segment %d", ErrBadDigest, i)
		}
		st.seg.Number, st.seg.ETag, st.seg.Checksum = s.Number, s.ETag, s.Checksum
		segs = append(segs, st.seg)
	}
	return segs, nil
}

// storeReplicaElsewhere is storeReplicaData for a version in parts, none
// small enough to keep inline, whose body the node that received it
// writes: each part to a blob of its own, in one call.
func (l *Layer) storeReplicaElsewhere(bucket, key string, in *Version, body ElsewhereBody, enc *encryption) ([]Segment, error) {
	if err := l.room(in.Size); err != nil {
		return nil, err
	}
	blobs := make([]ElsewhereBlob, len(in.Segments))
	segs := make([]Segment, len(in.Segments))
	for i, s := range in.Segments {
		blobs[i].Size = s.Size
		if enc != nil {
			dk, sealed, err := enc.c.NewKey(enc.aad)
			if err != nil {
				return nil, err
			}
			blobs[i].DataKey, segs[i].SealedKey = dk, sealed
		}
	}
	got, err := l.storeElsewhere(body, bucket, key, blobs, nil)
	if err != nil {
		return nil, err
	}
	for i, s := range in.Segments {
		segs[i].BlobID, segs[i].Size = blobs[i].ID, got[i].Size
		segs[i].Number, segs[i].ETag, segs[i].Checksum = s.Number, s.ETag, s.Checksum
		switch want := replicaDigest(in, s); {
		case err != nil:
		case got[i].Size != s.Size:
			err = ErrIncompleteBody
		case want != "" && got[i].MD5 != want:
			err = fmt.Errorf("%w: segment %d", ErrBadDigest, i)
		}
	}
	if err != nil {
		l.release(segs...)
		return nil, err
	}
	return segs, nil
}

// putReplicaLocked commits a received version (replacing cur, the old copy
// of the same version, if any) and moves the latest pointer if it is newer.
func (l *Layer) putReplicaLocked(bucket, key string, v, cur *Version, sync bool) error {
	batch := l.meta.NewBatch()
	t, err := l.stageReplica(batch, bucket, key, v, cur)
	if err != nil {
		return err
	}
	if err := l.commit(batch, bucket, &t, sync); err != nil {
		return err
	}
	if cur != nil {
		l.release(cur.Segments...)
	}
	return nil
}

// stageReplica adds to batch the writes of a received version v (replacing
// cur, the old copy of the same version, if any, whose segments the caller
// releases once the batch commits) and returns their stats tally. The
// caller holds the key's lock.
func (l *Layer) stageReplica(batch meta.Batch, bucket, key string, v, cur *Version) (tally, error) {
	lat, err := l.latest(bucket, key)
	if err != nil && !errors.Is(err, ErrObjectNotFound) {
		return tally{}, err
	}
	return stageReplicaOver(batch, bucket, key, v, cur, lat), nil
}

// stageReplicaOver is stageReplica with the key's latest-version summary
// already read (nil: the key has no version).
func stageReplicaOver(batch meta.Batch, bucket, key string, v, cur *Version, lat *latest) tally {
	setRecord(batch, versionKey(bucket, key, v.VersionID), v)
	adopt(batch, v.Segments...)
	t := tally{key: key}
	t.version(v)
	if cur != nil {
		t.version(cur)
		disown(batch, cur.Segments...)
	}
	newLatest := lat == nil || lat.VersionID == v.VersionID ||
		newerStamp(v.ModTime, v.Origin, v.VersionID, lat.ModTime, lat.Origin, lat.VersionID)
	if newLatest {
		sum := summarize(v)
		setRecord(batch, latestKey(bucket, key), sum)
		t.latest(lat, &sum)
	}
	return t
}

// mergeReplicaMeta applies a newer metadata-only change (tags, user
// metadata) of a version already here.
func (l *Layer) mergeReplicaMeta(bucket, key string, in *Version) (ApplyOutcome, error) {
	unlock := l.lockKey(bucket, key)
	defer unlock()
	cur, err := l.getVersion(bucket, key, in.VersionID)
	if errors.Is(err, ErrVersionNotFound) {
		if l.refusesLateCopy(bucket, key, in) {
			return Stale, nil // purged meanwhile
		}
	}
	if err != nil {
		return 0, err
	}
	if out, done := compareCopies(cur, in); done {
		return out, nil
	}
	batch := l.meta.NewBatch()
	t, err := l.stageReplicaMeta(batch, bucket, key, cur, in)
	if err != nil {
		return 0, err
	}
	if err := l.commit(batch, bucket, &t, true); err != nil {
		return 0, err
	}
	l.notifyArrival(bucket, key)
	return Applied, nil
}

// stageReplicaMeta adds to batch the merge of in's newer metadata into
// cur, the copy here, and returns the stats tally. The caller holds the
// key's lock.
func (l *Layer) stageReplicaMeta(batch meta.Batch, bucket, key string, cur, in *Version) (tally, error) {
	if err := l.foldStatus(bucket, key, cur); err != nil {
		return tally{}, err
	}
	old := *cur
	cur.MetaTime, cur.Tags, cur.UserMeta, cur.ContentType, cur.Headers = in.MetaTime, in.Tags, in.UserMeta, in.ContentType, in.Headers
	cur.ACL = in.ACL
	l.mergeReplicaLock(cur, in)
	batch.Set(versionKey(bucket, key, cur.VersionID), encode(cur))
	t := tally{key: key}
	t.version(&old)
	t.version(cur)
	return t, nil
}

// ApplyPurge removes a version permanently on a peer's request; modTime is
// the purged version's HLC time (0 when the peer did not say). The purge
// is remembered (see Purged) whether or not the version is here, so a late
// copy from a third site cannot bring it back. A missing version is a
// duplicate: the purge already happened or the version has not arrived.
// So is a missing bucket: the peer emptied and deleted it, its deletion
// arrived first (it travels in another sender queue), and a late record of
// the bucket cannot bring it back (ApplyBucket keeps its tombstone).
func (l *Layer) ApplyPurge(ctx context.Context, bucket, key, versionID string, modTime int64, how PurgeKind) (ApplyOutcome, error) {
	if err := ValidateKey(key); err != nil {
		return 0, err
	}
	if !validVersionID(versionID) {
		return 0, ErrInvalidVersionID
	}
	if _, err := l.Bucket(ctx, bucket); errors.Is(err, ErrBucketNotFound) {
		return Duplicate, nil
	} else if err != nil {
		return 0, err
	}
	unlock := l.lockKey(bucket, key)
	defer unlock()
	cur, err := l.getVersion(bucket, key, versionID)
	if errors.Is(err, ErrVersionNotFound) {
		return Duplicate, l.rememberPurge(bucket, key, versionID, modTime, how)
	}
	if err != nil {
		return 0, err
	}
	if modTime > 0 && cur.ModTime > modTime {
		return Stale, nil // a newer null version than the one purged
	}
	if !l.replicaMayPurge(cur) {
		return Stale, nil // under legal hold or compliance retention here: kept
	}
	if how == PurgeExpiredMarker && cur.DeleteMarker {
		// The peer removed the marker as the key's only version there.
		// Here it hides versions the peer lacks (they reached this site
		// and not the peer, or not yet): removed, it would bring them
		// back, here and, its expiry marker being gone, for good. It
		// stays, unremembered; this site's rules expire what it hides,
		// then remove it, and those purges reach the peer.
		if other, err := l.newestVersion(bucket, key, versionID); err != nil {
			return 0, err
		} else if other != nil {
			return Stale, nil
		}
	}
	if _, err := l.removeVersionLocked(bucket, key, versionID, how, false, true, nil); err != nil {
		return 0, err
	}
	l.notifyArrival(bucket, key)
	return Applied, nil
}

// rememberPurge records the purge of a version that is not here (yet). A
// version ID names one version for ever, except "null", whose purge is
// remembered only with its time.
func (l *Layer) rememberPurge(bucket, key, versionID string, modTime int64, how PurgeKind) error {
	if l.repl == nil || !l.repl.RequiresVersioning() {
		return nil
	}
	if modTime <= 0 {
		if versionID == NullVersionID {
			return nil
		}
		modTime = math.MaxInt64
	}
	if t, ok := l.Purged(bucket, key, versionID); ok && t >= modTime {
		return nil
	}
	batch := l.meta.NewBatch()
	batch.Set(purgedKey(bucket, key, versionID), encodePurged(modTime, how))
	return batch.Commit(true)
}

// ApplyBucket applies a peer's bucket record, or its deletion: a change
// older than the local record is Stale, and so is the record of a bucket
// that is not here and was deleted after the record's last change (its
// tombstone), so a late record never resurrects a deleted bucket. A bucket
// still holding versions is not deleted (ErrBucketNotEmpty): its objects'
// deletions are on their way.
func (l *Layer) ApplyBucket(ctx context.Context, in Bucket, deleted bool, at int64) (ApplyOutcome, error) {
	if !ValidBucketName(in.Name) {
		return 0, ErrInvalidBucketName
	}
	l.cfg.Clock.Observe(max(in.ModTime, at))
	l.bucketsMu.Lock()
	defer l.bucketsMu.Unlock()
	cur, ok := l.buckets[in.Name]
	if deleted {
		if !ok {
			// Remember the deletion even so: the bucket's creation may
			// still be on its way from another site.
			if gone, _ := l.bucketGone(in.Name); gone >= at {
				return Duplicate, nil
			}
			batch := l.meta.NewBatch()
			l.setBucketGone(batch, in.Name, at)
			if err := batch.Commit(true); err != nil {
				return 0, err
			}
			return Duplicate, nil
		}
		if cur.ModTime > at {
			return Stale, nil
		}
		if err := l.deleteBucketLocked(in.Name, at, nil); err != nil {
			return 0, err
		}
		return Applied, nil
	}
	if !ok {
		if gone, ok := l.bucketGone(in.Name); ok && gone >= in.lastChange() {
			return Stale, nil
		}
		b := in
		if err := l.putBucketLocked(&b, nil); err != nil {
			return 0, err
		}
		return Applied, nil
	}
	merged, out := mergeBucket(cur, &in)
	if out != Applied {
		return out, nil
	}
	if err := l.putBucketLocked(merged, nil); err != nil {
		return 0, err
	}
	return Applied, nil
}

// setBucketGone records in batch that bucket was deleted at HLC time at.
func (l *Layer) setBucketGone(batch meta.Batch, bucket string, at int64) {
	batch.Set(bucketGoneKey(bucket), encode(at))
}

// bucketGone returns the time of the bucket's last deletion, if any is
// remembered.
func (l *Layer) bucketGone(bucket string) (int64, bool) {
	raw, err := l.meta.Get(bucketGoneKey(bucket))
	if err != nil {
		return 0, false
	}
	var t int64
	if decode(raw, &t) != nil {
		return 0, false
	}
	return t, true
}

// mergeBucket merges a peer's bucket record into the local one per
// setting: each setting takes the side that changed it last (ties to the
// incoming record only when equal, so merging is idempotent).
func mergeBucket(cur, in *Bucket) (*Bucket, ApplyOutcome) {
	b := *cur
	b.FieldTimes = maps.Clone(cur.FieldTimes)
	newer, older := false, false
	for _, f := range bucketFields {
		ct, it := cur.fieldTime(f.name), in.fieldTime(f.name)
		switch {
		case it > ct:
			f.copy(&b, in)
			if b.FieldTimes == nil {
				b.FieldTimes = map[string]int64{}
			}
			b.FieldTimes[f.name] = it
			newer = true
		case it < ct && !f.equal(cur, in):
			older = true
		}
	}
	b.ModTime = max(cur.ModTime, in.ModTime)
	switch {
	case newer:
		return &b, Applied
	case older:
		return nil, Stale
	}
	return nil, Duplicate
}

// Version returns one version record (delete markers included), for the
// replication sender.
func (l *Layer) Version(ctx context.Context, bucket, key, versionID string) (*Version, error) {
	if _, err := l.Bucket(ctx, bucket); err != nil {
		return nil, err
	}
	return l.getVersion(bucket, key, versionID)
}

// VersionOf names one version of a bucket's key.
type VersionOf struct{ Bucket, Key, VersionID string }

// Versions reads several versions as Version does one, in one read of the
// metadata store (meta.ViewMany): for each, the version, or nil and its
// error (ErrBucketNotFound, ErrVersionNotFound, or the read's).
func (l *Layer) Versions(ctx context.Context, of []VersionOf) ([]*Version, []error) {
	vs, errs := make([]*Version, len(of)), make([]error, len(of))
	var keys [][]byte
	var at []int // of's index of each key read
	for i, o := range of {
		if _, err := l.Bucket(ctx, o.Bucket); err != nil {
			errs[i] = err
			continue
		}
		keys = append(keys, versionKey(o.Bucket, o.Key, o.VersionID))
		at = append(at, i)
	}
	err := meta.ViewMany(l.meta, keys, func(n int, raw []byte, found bool) error {
		i := at[n]
		if !found {
			errs[i] = ErrVersionNotFound
			return nil
		}
		v := &Version{}
		if err := decode(raw, v); err != nil {
			errs[i] = err
			return nil
		}
		vs[i] = v
		return nil
	})
	if err != nil {
		for _, i := range at {
			if vs[i] == nil && errs[i] == nil {
				errs[i] = err
			}
		}
	}
	return vs, errs
}

// VersionRef names one stored version and its replication stamp.
type VersionRef struct {
	Key          string `json:"k" msgpack:"k"`
	VersionID    string `json:"v" msgpack:"v"`
	ModTime      int64  `json:"t" msgpack:"t"`
	MetaTime     int64  `json:"m,omitempty" msgpack:"m,omitempty"`
	Origin       string `json:"o,omitempty" msgpack:"o,omitempty"`
	DeleteMarker bool   `json:"d,omitempty" msgpack:"d,omitempty"`
	Size         int64  `json:"s,omitempty" msgpack:"s,omitempty"`
}

// WalkVersions calls fn for every version of bucket in key order, starting
// after the version key (afterKey, afterVersion) (both empty: from the
// start), until fn returns false. It is the resync and mismatch cursor.
func (l *Layer) WalkVersions(ctx context.Context, bucket, afterKey, afterVersion string, fn func(VersionRef) bool) error {
	lo := versionBucketPrefix(bucket)
	hi := meta.PrefixEnd(lo)
	if afterKey != "" || afterVersion != "" {
		lo = append(versionKey(bucket, afterKey, afterVersion), 0)
	}
	return meta.Scan(l.meta, lo, hi, func(k, raw []byte) (bool, error) {
		key, _, ok := splitVersionKey(bucket, k)
		if !ok {
			return false, fmt.Errorf("objects: bad version key %q", k)
		}
		v := &Version{}
		if err := decode(raw, v); err != nil {
			return false, err
		}
		return fn(refOf(key, v)), nil
	})
}

func refOf(key string, v *Version) VersionRef {
	return VersionRef{Key: key, VersionID: v.VersionID, ModTime: v.ModTime, MetaTime: v.MetaTime,
		Origin: v.Origin, DeleteMarker: v.DeleteMarker, Size: v.Size}
}

// KeyVersions returns every version of one key (delete markers included),
// newest first.
func (l *Layer) KeyVersions(ctx context.Context, bucket, key string) ([]*Version, error) {
	if _, err := l.Bucket(ctx, bucket); err != nil {
		return nil, err
	}
	var out []*Version
	p := versionsPrefix(bucket, key)
	err := meta.Scan(l.meta, p, meta.PrefixEnd(p), func(k, raw []byte) (bool, error) {
		v := &Version{}
		if err := decode(raw, v); err != nil {
			return false, err
		}
		out = append(out, v)
		return true, nil
	})
	sort.Slice(out, func(i, j int) bool { return newer(out[i], out[j]) })
	return out, err
}

// Purged reports whether this site permanently deleted a version of
// bucket/key with that ID, and the HLC time of the version it deleted.
func (l *Layer) Purged(bucket, key, versionID string) (int64, bool) {
	t, _, ok := l.PurgedAs(bucket, key, versionID)
	return t, ok
}

// refusesLateCopy reports whether a peer's copy in of a version of
// bucket/key comes after its purge here, and is refused: a purge is
// remembered so that no late copy brings the version back. An expired
// object delete marker removed here as the key's only version is taken
// again once the key has other versions here: it hides them on the site
// that sent it, and must here too.
func (l *Layer) refusesLateCopy(bucket, key string, in *Version) bool {
	t, how, ok := l.PurgedAs(bucket, key, in.VersionID)
	return l.refusesLateCopyAfter(bucket, key, in, t, how, ok)
}

// refusesLateCopyAfter is refusesLateCopy with the version's purge
// tombstone already read (PurgedAs: t, how, ok).
func (l *Layer) refusesLateCopyAfter(bucket, key string, in *Version, t int64, how PurgeKind, ok bool) bool {
	if !ok || in.ModTime > t {
		return false
	}
	if how == PurgeExpiredMarker && in.DeleteMarker {
		other, err := l.newestVersion(bucket, key, in.VersionID)
		return err != nil || other == nil
	}
	return true
}

// PurgedAs is Purged with the kind of the purge remembered: mismatch
// detection sends it again as it was made.
func (l *Layer) PurgedAs(bucket, key, versionID string) (int64, PurgeKind, bool) {
	raw, err := l.meta.Get(purgedKey(bucket, key, versionID))
	if err != nil {
		return 0, 0, false
	}
	return decodePurged(raw)
}

// decodePurged decodes a purge tombstone (encodePurged); ok is false for
// one that does not decode.
func decodePurged(raw []byte) (int64, PurgeKind, bool) {
	var t int64
	if decode(raw, &t) == nil {
		return t, PurgeVersion, true
	}
	var p purgedRecord
	if decode(raw, &p) != nil {
		return 0, 0, false
	}
	return p.ModTime, p.Kind, true
}

// purgedRecord is a purge tombstone of a kind other than PurgeVersion,
// whose tombstone is the purged version's time alone (as before kinds).
type purgedRecord struct {
	ModTime int64     `msgpack:"t"`
	Kind    PurgeKind `msgpack:"k"`
}

// encodePurged is the tombstone of a purge of how's kind of a version of
// time modTime.
func encodePurged(modTime int64, how PurgeKind) []byte {
	if how == PurgeVersion {
		return encode(modTime)
	}
	return encode(purgedRecord{ModTime: modTime, Kind: how})
}
