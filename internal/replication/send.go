package replication

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/twinlake/twinlake/internal/objects"
)

// The sender: the only part of a target that calls the peer. Each send
// reads the version (or bucket) as it is now, so a send retried after a
// change carries the change.

// runBatch sends small versions in one request, which may carry other
// workers' batches too (combine.go).
func (t *target) runBatch(jobs []job) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.ctx, sendTimeout)
	defer cancel()
	ol := t.e.cfg.Objects
	of := make([]objects.VersionOf, len(jobs))
	for i, j := range jobs {
		of[i] = objects.VersionOf{Bucket: j.e.Bucket, Key: j.e.Key, VersionID: j.e.VersionID}
	}
	vs, errs := t.versions(ctx, jobs, of)
	data, readErrs := ol.ReplicationBytesOf(of, vs)
	var items []VersionItem
	var sent []job
	for i, j := range jobs {
		err := errs[i]
		if errors.Is(err, objects.ErrVersionNotFound) || errors.Is(err, objects.ErrBucketNotFound) {
			t.succeeded(j, nil, objects.Duplicate, 0, start) // purged since: its purge follows
			continue
		}
		if err == nil {
			err = readErrs[i]
		}
		if err != nil {
			t.failed(j, err, start)
			continue
		}
		items = append(items, VersionItem{Bucket: j.e.Bucket, Key: j.e.Key, Version: vs[i], Data: data[i]})
		sent = append(sent, j)
	}
	if len(items) == 0 {
		return
	}
	results, err := t.comb.send(ctx, items, t.sendVersions)
	switch {
	case err == nil:
	case errors.Is(err, ErrLinkDown) || errors.Is(err, ErrIncompatible) || t.ctx.Err() != nil:
		t.incompatible(err)
		t.observe(sendLinkDown, err)
		t.release(sent...)
		return
	default:
		for _, j := range sent {
			t.failed(j, err, start)
		}
		return
	}
	var ok []delivered
	for i, j := range sent {
		r := results[i]
		if r.Code != "" {
			t.failed(j, fmt.Errorf("%w: %s (%s)", ErrRefused, r.Message, r.Code), start)
			continue
		}
		out := objects.Applied
		switch r.Outcome {
		case objects.Duplicate.String():
			out = objects.Duplicate
		case objects.Stale.String():
			out = objects.Stale
		}
		ok = append(ok, delivered{j: j, v: items[i].Version, out: out, sent: int64(len(items[i].Data))})
	}
	if len(ok) > 0 {
		t.succeededAll(ok, start)
	}
}

// versions returns the versions jobs send (of names them), and each one's
// error: a job's carried copy (its bucket still there), the others in one
// read of the metadata (on a multi-node site each read is a round trip).
// A carried copy can be older than the record by then (its metadata
// changed since): the change's own entry follows, the peer keeps the
// newer of the two, and the sender records no status for the older
// (objects.SetTargetStatuses).
func (t *target) versions(ctx context.Context, jobs []job, of []objects.VersionOf) ([]*objects.Version, []error) {
	ol := t.e.cfg.Objects
	var read []objects.VersionOf
	var at []int
	vs, errs := make([]*objects.Version, len(jobs)), make([]error, len(jobs))
	for i, j := range jobs {
		if j.v == nil {
			read, at = append(read, of[i]), append(at, i)
			continue
		}
		if _, err := ol.Bucket(ctx, j.e.Bucket); err != nil {
			errs[i] = err
			continue
		}
		vs[i] = j.v
		t.carriedSends.Add(1)
	}
	if len(read) == 0 {
		return vs, errs
	}
	rvs, rerrs := ol.Versions(ctx, read)
	for n, i := range at {
		vs[i], errs[i] = rvs[n], rerrs[n]
	}
	return vs, errs
}

// sendVersions sends one combined request, counted.
func (t *target) sendVersions(ctx context.Context, items []VersionItem) ([]ItemResult, error) {
	t.e.m.batchRequests.WithLabelValues(t.site.Name).Inc()
	t.e.m.batchVersions.WithLabelValues(t.site.Name).Add(float64(len(items)))
	return t.peer.SendVersions(ctx, items)
}

func (t *target) run(j job) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.ctx, sendTimeout)
	out, sent, err := t.send(ctx, j.e)
	cancel()
	switch {
	case err == nil:
		t.succeeded(j, nil, out, sent, start)
	case errors.Is(err, ErrLinkDown) || errors.Is(err, ErrIncompatible) || t.ctx.Err() != nil:
		t.incompatible(err)
		t.observe(sendLinkDown, err)
		t.release(j)
	case j.e.Op == OpIAM && errors.Is(err, ErrUnsupported):
		t.iamRefused(err)
		t.release(j) // stays where it is: no retry spent, no failure counted
	default:
		t.failed(j, err, start)
	}
}

// iamRefused closes the IAM gate after the peer answered NoSuchCall to an
// IAM record: logged and traced once, until it takes one.
func (t *target) iamRefused(err error) {
	if t.iam.refuse(time.Now(), err.Error()) {
		t.e.log.Warn("peer takes no IAM records (an older build): IAM changes wait for its upgrade; the rest replicates",
			"target", t.site.Name, "err", err)
		t.e.traceEvent("replication.IAMUnsupported", t.site.Name, "iam", "", "peer takes no IAM records: held until it is upgraded", time.Now(), err)
	}
}

// iamTaken reopens the IAM gate once the peer took a record (it was
// upgraded): every record held back is read again.
func (t *target) iamTaken() {
	if t.iam.reopen() {
		t.e.log.Info("peer takes IAM records again: sending those held back", "target", t.site.Name)
		t.rewindCursors()
		t.wakeUp()
	}
}

// send delivers one entry; sent is the data bytes sent.
func (t *target) send(ctx context.Context, en Entry) (objects.ApplyOutcome, int64, error) {
	ol := t.e.cfg.Objects
	switch en.Op {
	case OpVersion:
		v, err := ol.Version(ctx, en.Bucket, en.Key, en.VersionID)
		if errors.Is(err, objects.ErrVersionNotFound) || errors.Is(err, objects.ErrBucketNotFound) {
			return objects.Duplicate, 0, nil // purged since: its purge follows
		}
		if err != nil {
			return 0, 0, err
		}
		var body io.Reader = http0{}
		var src *sourceReader
		size := v.Size
		if !v.DeleteMarker && (v.Size > 0 || len(v.KeyCheck) > 0) {
			// The plaintext, or an SSE-C version's ciphertext as stored.
			rc, n, err := ol.ReplicationData(en.Bucket, en.Key, v)
			if err != nil {
				return 0, 0, err
			}
			defer rc.Close()
			src, size = &sourceReader{r: rc}, n
			body = src
		}
		out, err := t.peer.SendVersion(ctx, en.Bucket, en.Key, v, body, size)
		if err != nil && src != nil && src.failed() != nil {
			// The send failed reading this site's data, not reaching the
			// peer (which a transport reports alike): most often the
			// version was purged while it streamed, and its purge follows.
			if _, verr := ol.Version(ctx, en.Bucket, en.Key, en.VersionID); errors.Is(verr, objects.ErrVersionNotFound) || errors.Is(verr, objects.ErrBucketNotFound) {
				return objects.Duplicate, 0, nil
			}
			return 0, 0, fmt.Errorf("replication: read the version to send: %w", src.failed())
		}
		return out, size, err
	case OpPurge:
		out, err := t.peer.SendPurge(ctx, en.Bucket, en.Key, en.VersionID, en.At, en.Purge)
		return out, 0, err
	case OpBucket:
		b, err := ol.Bucket(ctx, en.Bucket)
		if errors.Is(err, objects.ErrBucketNotFound) {
			return objects.Duplicate, 0, nil // deleted since: its deletion follows
		}
		if err != nil {
			return 0, 0, err
		}
		out, err := t.peer.SendBucket(ctx, b, false, 0)
		return out, 0, err
	case OpBucketDelete:
		out, err := t.peer.SendBucket(ctx, objects.Bucket{Name: en.Bucket}, true, en.At)
		return out, 0, err
	case OpIAM:
		out, err := t.sendIAM(ctx, en)
		return out, 0, err
	}
	return 0, 0, errors.New("replication: unknown journal operation " + en.Op)
}

// sourceReader is a version's data on its way to the peer; it keeps the
// first error reading it, so a send that fails is known to have failed
// here rather than on the link.
// The transport may still be reading it when the send returns.
type sourceReader struct {
	r   io.Reader
	err atomic.Pointer[error]
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err.CompareAndSwap(nil, &err)
	}
	return n, err
}

// failed returns the first error reading the data, or nil.
func (s *sourceReader) failed() error {
	if e := s.err.Load(); e != nil {
		return *e
	}
	return nil
}

// http0 is an empty body.
type http0 struct{}

func (http0) Read([]byte) (int, error) { return 0, io.EOF }
