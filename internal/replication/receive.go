package replication

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/trace"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// countingElsewhere is a countingReader over a body another node of the
// site offered to write: what that node writes is counted too.
type countingElsewhere struct {
	*countingReader
	body objects.ElsewhereBody
}

func (c countingElsewhere) CanStore(blobs int, encrypted bool) bool {
	return c.body.CanStore(blobs, encrypted)
}

func (c countingElsewhere) StoreAs(blobs []objects.ElsewhereBlob, algs []checksum.Algorithm) ([]objects.StoredElsewhere, error) {
	st, err := c.body.StoreAs(blobs, algs)
	for _, s := range st {
		c.n += s.Size
	}
	return st, err
}

// ReceiveVersion applies a version sent by a peer (timestamp resolution,
// REPLICA marking: see objects.Layer.ApplyReplica).
func (e *Engine) ReceiveVersion(ctx context.Context, bucket, key string, v *objects.Version, body io.Reader) (objects.ApplyOutcome, error) {
	start := time.Now()
	cr := &countingReader{r: body}
	var counted io.Reader = cr
	if eb, ok := body.(objects.ElsewhereBody); ok {
		counted = countingElsewhere{cr, eb}
	}
	out, err := e.cfg.Objects.ApplyReplica(ctx, bucket, key, v, counted)
	e.received(out, cr.n, err)
	if e.cfg.Trace.Enabled(trace.Replication) {
		e.traceEvent("replication.Receive", v.Origin, bucket, key, fmt.Sprintf("version %s from %s: %s", v.VersionID, v.Origin, out), start, err)
	}
	return out, err
}

// ReceivePurge applies a permanent version delete sent by a peer; modTime
// is the purged version's HLC time, 0 if the peer did not send it; how
// says what it removes (objects.ApplyPurge).
func (e *Engine) ReceivePurge(ctx context.Context, bucket, key, versionID string, modTime int64, how objects.PurgeKind) (objects.ApplyOutcome, error) {
	start := time.Now()
	out, err := e.cfg.Objects.ApplyPurge(ctx, bucket, key, versionID, modTime, how)
	e.received(out, 0, err)
	e.traceEvent("replication.ReceivePurge", "", bucket, key, "purge "+versionID+": "+out.String(), start, err)
	if err == nil && out == objects.Stale && how == objects.PurgeExpiredMarker {
		// The marker stays here, hiding versions the peer lacked when it
		// removed it: the key's versions go to every peer again, the
		// marker after them, for the peer to hide them as this site does
		// (peers that hold them answer duplicate).
		if _, qerr := e.queueKey(ctx, *e.targets.Load(), bucket, key); qerr != nil {
			e.log.Warn("queue a kept marker's key again", "bucket", bucket, "key", key, "err", qerr)
		}
	}
	return out, err
}

// ReceiveBucket applies a bucket record or deletion sent by a peer.
func (e *Engine) ReceiveBucket(ctx context.Context, b objects.Bucket, deleted bool, at int64) (objects.ApplyOutcome, error) {
	start := time.Now()
	out, err := e.cfg.Objects.ApplyBucket(ctx, b, deleted, at)
	e.received(out, 0, err)
	what := "bucket settings"
	if deleted {
		what = "bucket delete"
	}
	e.traceEvent("replication.ReceiveBucket", "", b.Name, "", what+": "+out.String(), start, err)
	return out, err
}

func (e *Engine) received(out objects.ApplyOutcome, n int64, err error) {
	switch {
	case err != nil:
	case out == objects.Stale:
		e.m.rejected.Inc()
	default:
		e.m.receivedObjects.Inc()
		e.m.receivedBytes.Add(float64(n))
	}
}

// LocalInfo describes this site to a site that wants to join it.
func (e *Engine) LocalInfo(ctx context.Context) PeerInfo {
	info := PeerInfo{DeploymentID: e.cfg.SiteID, SiteName: e.cfg.SiteName, BucketConfig: map[string]string{}}
	for _, b := range e.cfg.Objects.ListBuckets(ctx) {
		info.Buckets = append(info.Buckets, b.Name)
		if b.Warehouse {
			info.Warehouses = append(info.Warehouses, b.Name)
		}
		info.BucketConfig[b.Name] = bucketFingerprint(b)
	}
	info.Objects = e.cfg.Objects.Usage().Objects
	if e.iam != nil {
		info.IAMRecords, info.IAMDigest = e.iam.LiveRecords(), iamDigest(e.iam)
	}
	if e.cfg.ReplicaCatalog != nil {
		info.ReplicaCatalog = e.cfg.ReplicaCatalog()
	}
	if st := e.state.Load(); st.Enabled() {
		c := *st
		c.ServiceSecretKey = ""
		info.Replication = &c
	}
	return info
}

// bucketFingerprint summarises the replicated settings of a bucket, to
// compare them between sites.
func bucketFingerprint(b objects.Bucket) string {
	keys := make([]string, 0, len(b.Tags))
	for k := range b.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := fmt.Sprintf("v=%s;e=%s;w=%t;p=%x;t=", b.Versioning, b.Encryption, b.Warehouse, b.Policy)
	for _, k := range keys {
		s += k + "=" + b.Tags[k] + ","
	}
	if len(b.CORS) > 0 { // only then: a peer predating CORS prints the same
		s += fmt.Sprintf(";cors=%x", b.CORS)
	}
	if b.ACL != "" { // likewise for a peer predating ACLs
		s += ";acl=" + b.ACL
	}
	if len(b.Lifecycle) > 0 { // likewise for a peer predating lifecycle
		s += fmt.Sprintf(";lc=%x", b.Lifecycle)
	}
	return s
}

// Digests returns this site's version digest of every bucket.
func (e *Engine) Digests(ctx context.Context) (map[string]objects.Digest, error) {
	out := map[string]objects.Digest{}
	for _, b := range e.cfg.Objects.ListBuckets(ctx) {
		d, err := e.cfg.Objects.BucketDigest(ctx, b.Name)
		if err != nil {
			return nil, err
		}
		out[b.Name] = d
	}
	return out, nil
}

// SlotVersions lists this site's versions of bucket in the given digest
// slots.
func (e *Engine) SlotVersions(ctx context.Context, bucket string, slots []int) ([]objects.VersionRef, error) {
	for _, slot := range slots {
		if slot < 0 || slot >= objects.DigestSlots {
			return nil, fmt.Errorf("%w: slot %d", ErrInvalidRequest, slot)
		}
	}
	return e.cfg.Objects.SlotVersions(ctx, bucket, slots)
}

// Resend queues every version of bucket/key for the peer site again, on
// its request (a replica missing a file asks the primary this way).
func (e *Engine) Resend(ctx context.Context, site, bucket, key string) (int, error) {
	t := e.target(site)
	if t == nil {
		return 0, fmt.Errorf("%w: no peer %q in the configuration", ErrInvalidRequest, site)
	}
	n, err := e.queueKey(ctx, []*target{t}, bucket, key)
	if n > 0 {
		e.traceEvent("replication.Resend", t.site.Name, bucket, key, fmt.Sprintf("peer asked for %d version(s) again", n), time.Now(), nil)
	}
	return n, err
}

// queueKey queues every version of bucket/key for each of targets again,
// oldest first (a delete marker after the versions it hides, which a
// peer may take only then), and returns how many versions there are.
func (e *Engine) queueKey(ctx context.Context, targets []*target, bucket, key string) (int, error) {
	var refs []objects.VersionRef
	err := e.cfg.Objects.WalkVersions(ctx, bucket, key, "", func(r objects.VersionRef) bool {
		if r.Key != key {
			return false
		}
		refs = append(refs, r)
		return true
	})
	if err != nil || len(refs) == 0 || len(targets) == 0 {
		return len(refs), err
	}
	slices.SortStableFunc(refs, func(a, b objects.VersionRef) int { return cmp.Compare(a.ModTime, b.ModTime) })
	batch := e.cfg.Meta.NewBatch()
	now := time.Now().UnixNano()
	for _, t := range targets {
		for _, r := range refs {
			t.journal(batch, Entry{Op: OpVersion, Bucket: bucket, Key: key, VersionID: r.VersionID, Size: r.Size, At: r.ModTime, Queued: now})
		}
	}
	if err := batch.Commit(true); err != nil {
		return 0, err
	}
	for _, t := range targets {
		t.wakeUp()
	}
	return len(refs), nil
}

// RequestResend asks every reachable peer to send bucket/key again; it
// returns how many versions the peers queued in all.
func (e *Engine) RequestResend(ctx context.Context, bucket, key string) (int, error) {
	total := 0
	var errs []error
	for _, t := range *e.targets.Load() {
		if !t.online() {
			continue
		}
		n, err := t.peer.Resend(ctx, e.cfg.SiteID, bucket, key)
		total += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}

// Peers describes every peer as it describes itself (skipping unreachable
// ones, which are returned by name in unreachable).
func (e *Engine) Peers(ctx context.Context) (infos []PeerInfo, unreachable []string) {
	for _, t := range *e.targets.Load() {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, err := t.peer.Info(cctx)
		cancel()
		if err != nil {
			unreachable = append(unreachable, t.site.Name)
			continue
		}
		infos = append(infos, info)
	}
	return infos, unreachable
}

// Peer returns the client of a peer (by name or deployment ID) and its
// name, or nil when no such peer is configured.
func (e *Engine) Peer(nameOrID string) (Peer, string) {
	if t := e.target(nameOrID); t != nil {
		return t.peer, t.site.Name
	}
	return nil, ""
}

// PeerNames returns the names of every configured peer.
func (e *Engine) PeerNames() []string {
	var out []string
	for _, t := range *e.targets.Load() {
		out = append(out, t.site.Name)
	}
	return out
}

// keySync is written with a synced commit after a batch of unsynced
// applies, making them all durable before the batch is acknowledged.
const keySync = "r/sync"

// ReceiveVersions applies a batch of small versions in order, each as
// ReceiveVersion does, making them durable together before it returns
// (objects.ApplyReplicas: one commit and one sync for the lot, or for
// each part of a large batch). guard,
// when set, may refuse an item's bucket. Each item's outcome or error is
// reported through result.
func (e *Engine) ReceiveVersions(ctx context.Context, items []VersionItem, guard func(ctx context.Context, bucket string) error,
	result func(i int, out objects.ApplyOutcome, err error)) error {
	start := time.Now()
	var apply []objects.ReplicaItem
	var index []int // of each item in apply
	for i, it := range items {
		if it.Version == nil {
			result(i, 0, fmt.Errorf("%w: item %d has no version", ErrInvalidRequest, i))
			continue
		}
		if guard != nil {
			if err := guard(ctx, it.Bucket); err != nil {
				result(i, 0, err)
				continue
			}
		}
		apply = append(apply, objects.ReplicaItem{Bucket: it.Bucket, Key: it.Key, Version: it.Version, Data: it.Data})
		index = append(index, i)
	}
	if len(apply) == 0 {
		return nil
	}
	outs, errs, synced := e.cfg.Objects.ApplyReplicas(ctx, apply)
	applied := false
	for n, it := range apply {
		out, err := outs[n], errs[n]
		applied = applied || (err == nil && out == objects.Applied)
		e.received(out, int64(len(it.Data)), err)
		if e.cfg.Trace.Enabled(trace.Replication) {
			e.traceEvent("replication.Receive", it.Version.Origin, it.Bucket, it.Key,
				fmt.Sprintf("version %s from %s: %s (batch)", it.Version.VersionID, it.Version.Origin, out), start, err)
		}
		result(index[n], out, err)
	}
	if synced || !applied {
		return nil
	}
	b := e.cfg.Meta.NewBatch()
	b.Set([]byte(keySync), []byte(strconv.FormatInt(time.Now().UnixNano(), 10)))
	return b.Commit(true)
}
