package objects

import (
	"context"
	"errors"

	"github.com/twinlake/twinlake/internal/meta"
)

// DeleteResult says what a delete did.
type DeleteResult struct {
	// VersionID is the delete marker created, or the version removed.
	VersionID string
	// DeleteMarker is true when a marker was created or a marker was removed.
	DeleteMarker bool
}

// DeleteObject deletes bucket/key as S3 does. Without versionID: on a
// versioned bucket it adds a delete marker; on a suspended bucket it adds a
// null delete marker replacing the null version; on an unversioned bucket it
// removes the object. With versionID it removes that version permanently.
// Deleting what does not exist succeeds.
//
// A version under object lock (legal hold, or a retention that runs) is not
// removed: ErrObjectLocked (see DeleteObjectWith for a governance bypass).
func (l *Layer) DeleteObject(ctx context.Context, bucket, key, versionID string) (DeleteResult, error) {
	return l.DeleteObjectWith(ctx, bucket, key, versionID, DeleteOptions{})
}

// DeleteObjectWith is DeleteObject with options.
func (l *Layer) DeleteObjectWith(ctx context.Context, bucket, key, versionID string, opts DeleteOptions) (DeleteResult, error) {
	if err := ValidateKey(key); err != nil {
		return DeleteResult{}, err
	}
	if versionID != "" && !validVersionID(versionID) {
		return DeleteResult{}, ErrInvalidVersionID
	}
	unlock := l.lockKey(bucket, key)
	defer unlock()
	b, err := l.Bucket(ctx, bucket)
	if err != nil {
		return DeleteResult{}, err
	}
	guard := l.removalGuard(opts.BypassGovernance)
	if versionID != "" {
		return l.removeVersionLocked(bucket, key, versionID, PurgeVersion, true, true, guard)
	}
	switch b.Versioning {
	case VersioningEnabled:
		return l.addDeleteMarkerLocked(bucket, key, newVersionID())
	case VersioningSuspended:
		return l.addDeleteMarkerLocked(bucket, key, NullVersionID)
	default:
		res, err := l.removeVersionLocked(bucket, key, NullVersionID, PurgeVersion, true, true, guard)
		res.VersionID = ""
		return res, err
	}
}

func (l *Layer) addDeleteMarkerLocked(bucket, key, versionID string) (DeleteResult, error) {
	return l.addMarkerLocked(bucket, key, &Version{VersionID: versionID, ModTime: l.cfg.Clock.Now(), DeleteMarker: true, Origin: l.cfg.SiteID})
}

// addMarkerLocked stores delete marker v (a null marker replaces the null
// version) and makes it the latest version if it is the newest.
func (l *Layer) addMarkerLocked(bucket, key string, v *Version) (DeleteResult, error) {
	versionID := v.VersionID
	var old *Version
	if versionID == NullVersionID {
		var err error
		old, err = l.getVersion(bucket, key, NullVersionID)
		if err != nil && !errors.Is(err, ErrVersionNotFound) {
			return DeleteResult{}, err
		}
	}
	cur, err := l.latest(bucket, key)
	if err != nil && !errors.Is(err, ErrObjectNotFound) {
		return DeleteResult{}, err
	}
	batch := l.meta.NewBatch()
	l.replVersion(batch, bucket, key, v)
	sum := summarize(v)
	setRecord(batch, versionKey(bucket, key, versionID), v)
	t := tally{key: key}
	t.version(v)
	if cur == nil || cur.VersionID == versionID || newerStamp(v.ModTime, v.Origin, v.VersionID, cur.ModTime, cur.Origin, cur.VersionID) {
		setRecord(batch, latestKey(bucket, key), sum)
		t.latest(cur, &sum)
	}
	if old != nil {
		t.version(old)
		disown(batch, old.Segments...)
	}
	if err := l.commit(batch, bucket, &t, true); err != nil {
		return DeleteResult{}, err
	}
	l.replCommitted()
	if old != nil {
		l.release(old.Segments...)
	}
	return DeleteResult{VersionID: versionID, DeleteMarker: true}, nil
}

// DiscardVersion removes one version from this site alone: the removal is
// neither replicated nor remembered, so a peer's copy may bring it back.
// It repairs a site's copy that must be fetched again, and lets tests lose
// data on purpose.
func (l *Layer) DiscardVersion(ctx context.Context, bucket, key, versionID string) error {
	if _, err := l.Bucket(ctx, bucket); err != nil {
		return err
	}
	unlock := l.lockKey(bucket, key)
	defer unlock()
	_, err := l.removeVersionLocked(bucket, key, versionID, PurgeVersion, false, false, nil)
	return err
}

// PurgeKind says what a replicated purge asks of the sites that apply it.
type PurgeKind int

const (
	// PurgeVersion removes the version wherever it is.
	PurgeVersion PurgeKind = iota
	// PurgeExpiredMarker is a lifecycle's removal of an expired object
	// delete marker, the key's only version where the rules removed it: a
	// site where the marker still hides other versions keeps it (see
	// ApplyPurge).
	PurgeExpiredMarker
)

// removeVersionLocked removes one version and, if it was the latest,
// promotes the newest remaining one; how is the kind of purge, report says
// whether it is replicated (false when it came from a peer), remember
// whether it is remembered, with its kind, against late copies (see
// PurgedAs). guard, when set, may refuse the removal (object lock).
func (l *Layer) removeVersionLocked(bucket, key, versionID string, how PurgeKind, report, remember bool, guard func(*Version) error) (DeleteResult, error) {
	v, err := l.getVersion(bucket, key, versionID)
	if errors.Is(err, ErrVersionNotFound) {
		return DeleteResult{VersionID: versionID}, nil
	}
	if err != nil {
		return DeleteResult{}, err
	}
	if guard != nil {
		if err := guard(v); err != nil {
			return DeleteResult{}, err
		}
	}
	batch := l.meta.NewBatch()
	batch.Delete(versionKey(bucket, key, versionID))
	if err := l.dropStatus(batch, bucket, key, v); err != nil {
		return DeleteResult{}, err
	}
	cur, err := l.latest(bucket, key)
	if err != nil && !errors.Is(err, ErrObjectNotFound) {
		return DeleteResult{}, err
	}
	t := tally{key: key}
	t.version(v)
	disown(batch, v.Segments...)
	if cur != nil && cur.VersionID == versionID {
		next, err := l.newestVersion(bucket, key, versionID)
		if err != nil {
			return DeleteResult{}, err
		}
		if next == nil {
			batch.Delete(latestKey(bucket, key))
			t.latest(cur, nil)
		} else {
			s := summarize(next)
			batch.Set(latestKey(bucket, key), encode(s))
			t.latest(cur, &s)
		}
	}
	if report {
		l.replPurge(batch, bucket, key, v, how)
	}
	if remember && l.repl != nil && l.repl.RequiresVersioning() {
		// Remember the purge, here and on every site that applies it, so
		// a site that still holds the version (its purge delayed or
		// dropped) cannot bring it back (see ApplyReplica and Purged).
		batch.Set(purgedKey(bucket, key, versionID), encodePurged(v.ModTime, how))
	}
	if err := l.commit(batch, bucket, &t, true); err != nil {
		return DeleteResult{}, err
	}
	if report {
		l.replCommitted()
	}
	l.release(v.Segments...)
	return DeleteResult{VersionID: versionID, DeleteMarker: v.DeleteMarker}, nil
}

// newestVersion returns the key's newest version other than skip, or nil.
func (l *Layer) newestVersion(bucket, key, skip string) (*Version, error) {
	var best *Version
	p := versionsPrefix(bucket, key)
	err := meta.Scan(l.meta, p, meta.PrefixEnd(p), func(k, raw []byte) (bool, error) {
		v := &Version{}
		if err := decode(raw, v); err != nil {
			return false, err
		}
		if v.VersionID != skip && (best == nil || newer(v, best)) {
			best = v
		}
		return true, nil
	})
	return best, err
}

// newer orders versions by modification time, ties broken by origin site
// ID and then version ID, so every site picks the same winner.
func newer(a, b *Version) bool {
	return newerStamp(a.ModTime, a.Origin, a.VersionID, b.ModTime, b.Origin, b.VersionID)
}

func newerStamp(at int64, ao, aid string, bt int64, bo, bid string) bool {
	if at != bt {
		return at > bt
	}
	if ao != bo {
		return ao > bo
	}
	return aid > bid
}
