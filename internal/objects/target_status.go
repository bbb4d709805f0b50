package objects

import (
	"time"

	"github.com/twinlake/twinlake/internal/meta"
)

// A version's replication status lives in two places. The version record
// holds what the write set: every peer PENDING. What the sender learns
// afterwards (COMPLETED, FAILED, the timestamps) is a small status record
// per peer beside it, so that completing a send writes a few dozen bytes,
// without reading anything but the version's existence, instead of
// rewriting the version, whose record can carry up to 128 KiB of inline
// data. A status record names the version's stamp it describes; a rewrite
// of the version (a metadata change, a null version replaced) gives the
// version a new stamp, and the old records no longer apply. Readers that
// report the status (HeadObject, GetObject) fold the records into the
// version they return; writers that rewrite a version start from that
// folded copy, so nothing is lost. A purge removes the records with the
// version.

// targetStatus is the status record of one version for one peer.
type targetStatus struct {
	// ModTime and MetaTime are the stamp of the version it describes.
	ModTime           int64  `msgpack:"t"`
	MetaTime          int64  `msgpack:"m,omitempty"`
	Status            string `msgpack:"s"`
	ReplicaTimestamp  int64  `msgpack:"rts,omitempty"`
	ActivityTimestamp int64  `msgpack:"rat,omitempty"`
}

// foldStatus merges the version's status records that describe it into v.
// It reads nothing for a version without targets (a received copy, or one
// written with replication off).
func (l *Layer) foldStatus(bucket, key string, v *Version) error {
	if v == nil || len(v.Targets) == 0 {
		return nil
	}
	p := statusPrefix(bucket, key, v.VersionID)
	var folded map[string]string
	err := meta.Scan(l.meta, p, meta.PrefixEnd(p), func(k, raw []byte) (bool, error) {
		var s targetStatus
		if err := decode(raw, &s); err != nil {
			return false, err
		}
		if s.ModTime != v.ModTime || s.MetaTime != v.MetaTime {
			return true, nil
		}
		if folded == nil {
			folded = make(map[string]string, len(v.Targets))
			for id, st := range v.Targets {
				folded[id] = st
			}
		}
		folded[string(k[len(p):])] = s.Status
		v.ReplicaTimestamp = max(v.ReplicaTimestamp, s.ReplicaTimestamp)
		v.ActivityTimestamp = max(v.ActivityTimestamp, s.ActivityTimestamp)
		return true, nil
	})
	if folded != nil {
		v.Targets = folded
	}
	return err
}

// SetTargetStatus records the outcome of a send of one version to one
// peer. It is not synced: a status lost in a crash is rewritten when the
// journal entry, which is still there, is sent again.
func (l *Layer) SetTargetStatus(bucket, key, versionID, target, status string) error {
	return l.SetTargetStatuses(target, status, []TargetStatusUpdate{{Bucket: bucket, Key: key, VersionID: versionID}})
}

// TargetStatusUpdate is one version's part of SetTargetStatuses.
type TargetStatusUpdate struct {
	Bucket, Key, VersionID string
	// Sent, when set, is the version as the sender read it: its stamp
	// names the state the status describes, and saves reading the record.
	Sent *Version
	// Extra, when set, adds the caller's writes to the batch, even when
	// the version is gone.
	Extra func(meta.Batch)
}

// SetTargetStatuses records one peer's status for several versions, with
// the callers' extra writes (the sender's journal bookkeeping), in one
// unsynced batch: the replication sender completes a batch of sends with
// one commit instead of one per version.
func (l *Layer) SetTargetStatuses(target, status string, ups []TargetStatusUpdate) error {
	keys := make([]BucketKey, len(ups))
	vkeys := make([][]byte, len(ups))
	for i, u := range ups {
		keys[i] = BucketKey{u.Bucket, u.Key}
		vkeys[i] = versionKey(u.Bucket, u.Key, u.VersionID)
	}
	unlock := l.lockKeys(keys)
	defer unlock()
	// Every version's record in one read (one round trip where the
	// metadata is across the network, while these keys stay locked): the
	// record itself for a version sent without its stamp (a resync's),
	// whether it is still there and still has the stamp sent for the
	// others. A version purged since it was sent gets no record left
	// behind; one changed since keeps the status of its change's send, not
	// this older one's, which describes a stamp it no longer has.
	stored := make([]*Version, len(ups))
	err := meta.ViewMany(l.meta, vkeys, func(i int, raw []byte, found bool) error {
		switch u := ups[i]; {
		case !found:
		case u.Sent != nil && len(u.Sent.Targets) > 0:
			mt, mm, err := versionStamp(raw)
			if err != nil {
				return err
			}
			if mt == u.Sent.ModTime && mm == u.Sent.MetaTime {
				stored[i] = u.Sent
			}
		default:
			v := &Version{}
			if err := decode(raw, v); err != nil {
				return err
			}
			stored[i] = v
		}
		return nil
	})
	if err != nil {
		return err
	}
	now := time.Now().UnixNano()
	s := targetStatus{Status: status, ActivityTimestamp: now}
	if status == StatusCompleted {
		s.ReplicaTimestamp = now
	}
	batch := l.meta.NewBatch()
	for i, u := range ups {
		if stored[i] != nil {
			if err := l.setTargetStatus(batch, u, stored[i], target, s); err != nil {
				return err
			}
		}
		if u.Extra != nil {
			u.Extra(batch)
		}
	}
	return batch.Commit(false)
}

// setTargetStatus adds one version's status for target to batch; v is its
// stored record, or the copy the sender read of it. A version named twice
// in one batch gets the later write: the same record.
func (l *Layer) setTargetStatus(batch meta.Batch, u TargetStatusUpdate, v *Version, target string, s targetStatus) error {
	if len(v.Targets) == 0 {
		// A version written before replication was set up (sent by a
		// resync) keeps its status in its own record, rewritten with its
		// stamp unchanged, where readers look for it.
		v.Targets = map[string]string{target: s.Status}
		v.ActivityTimestamp, v.ReplicaTimestamp = s.ActivityTimestamp, max(v.ReplicaTimestamp, s.ReplicaTimestamp)
		batch.Set(versionKey(u.Bucket, u.Key, u.VersionID), encode(v))
		return nil
	}
	s.ModTime, s.MetaTime = v.ModTime, v.MetaTime
	if s.ReplicaTimestamp == 0 {
		// A failure after a success keeps the success's time.
		var old targetStatus
		err := l.meta.View(statusKey(u.Bucket, u.Key, u.VersionID, target), func(raw []byte) error { return decode(raw, &old) })
		if err == nil && old.ModTime == s.ModTime && old.MetaTime == s.MetaTime {
			s.ReplicaTimestamp = old.ReplicaTimestamp
		}
	}
	setRecord(batch, statusKey(u.Bucket, u.Key, u.VersionID, target), &s)
	return nil
}

// dropStatus adds to batch the removal of a version's status records.
func (l *Layer) dropStatus(batch meta.Batch, bucket, key string, v *Version) error {
	if len(v.Targets) == 0 {
		return nil // none were written
	}
	p := statusPrefix(bucket, key, v.VersionID)
	return meta.Scan(l.meta, p, meta.PrefixEnd(p), func(k, _ []byte) (bool, error) {
		batch.Delete(append([]byte(nil), k...))
		return true, nil
	})
}
