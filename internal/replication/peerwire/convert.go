package peerwire

import (
	"fmt"

	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/replication"
)

// FromVersion returns the wire form of v: what a peer needs to apply it,
// without what is local to this site.
func FromVersion(v *objects.Version) *ObjectVersion {
	w := &ObjectVersion{VersionID: v.VersionID, ModTime: v.ModTime, DeleteMarker: v.DeleteMarker, Size: v.Size, ETag: v.ETag,
		ContentType: v.ContentType, UserMeta: v.UserMeta, Headers: v.Headers, Checksums: v.Checksums, Tags: v.Tags,
		SSE: v.SSE, Multipart: v.Multipart, Origin: v.Origin, MetaTime: v.MetaTime, KeyCheck: v.KeyCheck,
		LockMode: v.LockMode, RetainUntil: v.RetainUntil, LegalHold: v.LegalHold, ACL: v.ACL}
	if len(v.Segments) > 0 {
		w.Segments = make([]Segment, len(v.Segments))
		for i, s := range v.Segments {
			w.Segments[i] = Segment{Number: s.Number, Size: s.Size, ETag: s.ETag, Checksum: s.Checksum}
			if len(v.KeyCheck) > 0 {
				w.Segments[i].SealedKey = s.SealedKey // sealed under the client's key, not this site's
			}
		}
	}
	return w
}

// ToVersion returns the domain version a peer sent.
func (w *ObjectVersion) ToVersion() *objects.Version {
	v := &objects.Version{VersionID: w.VersionID, ModTime: w.ModTime, DeleteMarker: w.DeleteMarker, Size: w.Size, ETag: w.ETag,
		ContentType: w.ContentType, UserMeta: w.UserMeta, Headers: w.Headers, Checksums: w.Checksums, Tags: w.Tags,
		SSE: w.SSE, Multipart: w.Multipart, Origin: w.Origin, MetaTime: w.MetaTime, KeyCheck: w.KeyCheck,
		LockMode: w.LockMode, RetainUntil: w.RetainUntil, LegalHold: w.LegalHold, ACL: w.ACL}
	if len(w.Segments) > 0 {
		v.Segments = make([]objects.Segment, len(w.Segments))
		for i, s := range w.Segments {
			v.Segments[i] = objects.Segment{Number: s.Number, Size: s.Size, ETag: s.ETag, Checksum: s.Checksum, SealedKey: s.SealedKey}
		}
	}
	return v
}

// FromItems returns the wire form of a batch.
func FromItems(items []replication.VersionItem) []VersionItem {
	out := make([]VersionItem, len(items))
	for i, it := range items {
		out[i] = VersionItem{Bucket: it.Bucket, Key: it.Key, Data: it.Data}
		if it.Version != nil {
			out[i].Version = FromVersion(it.Version)
		}
	}
	return out
}

// ToItems returns the domain batch a peer sent; an item without a version
// is malformed.
func ToItems(items []VersionItem) ([]replication.VersionItem, error) {
	out := make([]replication.VersionItem, len(items))
	for i, it := range items {
		if it.Version == nil {
			return nil, fmt.Errorf("%w: batch item %d has no version", ErrMalformed, i)
		}
		out[i] = replication.VersionItem{Bucket: it.Bucket, Key: it.Key, Version: it.Version.ToVersion(), Data: it.Data}
	}
	return out, nil
}

// FromItemResults returns the wire form of a batch's answers.
func FromItemResults(rs []replication.ItemResult) []ItemResult {
	out := make([]ItemResult, len(rs))
	for i, r := range rs {
		out[i] = ItemResult(r)
	}
	return out
}

// ToItemResults returns the domain form of a batch's answers.
func ToItemResults(rs []ItemResult) []replication.ItemResult {
	out := make([]replication.ItemResult, len(rs))
	for i, r := range rs {
		out[i] = replication.ItemResult(r)
	}
	return out
}

// FromBucket returns the wire form of a bucket's settings.
func FromBucket(b objects.Bucket) Bucket {
	w := Bucket{Name: b.Name, Created: b.Created, Versioning: b.Versioning, Tags: b.Tags, Policy: b.Policy,
		Encryption: b.Encryption, ModTime: b.ModTime, Warehouse: b.Warehouse, FieldTimes: b.FieldTimes, CORS: b.CORS,
		ACL: b.ACL, Lifecycle: b.Lifecycle, Quota: b.Quota}
	if c := b.ObjectLock; c != nil {
		w.ObjectLock = &LockConfig{Mode: c.Mode, Days: c.Days, Years: c.Years}
	}
	return w
}

// ToBucket returns the domain bucket a peer sent.
func (w Bucket) ToBucket() objects.Bucket {
	b := objects.Bucket{Name: w.Name, Created: w.Created, Versioning: w.Versioning, Tags: w.Tags, Policy: w.Policy,
		Encryption: w.Encryption, ModTime: w.ModTime, Warehouse: w.Warehouse, FieldTimes: w.FieldTimes, CORS: w.CORS,
		ACL: w.ACL, Lifecycle: w.Lifecycle, Quota: w.Quota}
	if c := w.ObjectLock; c != nil {
		b.ObjectLock = &objects.LockConfig{Mode: c.Mode, Days: c.Days, Years: c.Years}
	}
	return b
}

// FromDigests returns the wire form of every bucket's digest.
func FromDigests(d map[string]objects.Digest) Digests {
	out := make(Digests, len(d))
	for b, dg := range d {
		out[b] = dg[:]
	}
	return out
}

// ToDigests returns the domain digests a peer sent; a digest of another
// size than objects.DigestSlots is malformed.
func (w Digests) ToDigests() (map[string]objects.Digest, error) {
	out := make(map[string]objects.Digest, len(w))
	for b, slots := range w {
		if len(slots) != objects.DigestSlots {
			return nil, fmt.Errorf("%w: digest of bucket %q has %d slots, want %d", ErrMalformed, b, len(slots), objects.DigestSlots)
		}
		out[b] = objects.Digest(slots)
	}
	return out, nil
}

// FromRefs returns the wire form of version references.
func FromRefs(refs []objects.VersionRef) []VersionRef {
	out := make([]VersionRef, len(refs))
	for i, r := range refs {
		out[i] = VersionRef(r)
	}
	return out
}

// ToRefs returns the domain form of version references.
func ToRefs(refs []VersionRef) []objects.VersionRef {
	out := make([]objects.VersionRef, len(refs))
	for i, r := range refs {
		out[i] = objects.VersionRef(r)
	}
	return out
}

// FromState returns the wire form of a configuration.
func FromState(st replication.State) State {
	w := State{ServiceAccessKey: st.ServiceAccessKey, ServiceSecretKey: st.ServiceSecretKey, Updated: st.Updated}
	for _, s := range st.Sites {
		w.Sites = append(w.Sites, Site(s))
	}
	return w
}

// ToState returns the domain configuration a peer sent.
func (w State) ToState() replication.State {
	st := replication.State{ServiceAccessKey: w.ServiceAccessKey, ServiceSecretKey: w.ServiceSecretKey, Updated: w.Updated}
	for _, s := range w.Sites {
		st.Sites = append(st.Sites, replication.Site(s))
	}
	return st
}

// FromInfo returns the wire form of a site's description.
func FromInfo(in replication.PeerInfo) Info {
	w := Info{DeploymentID: in.DeploymentID, SiteName: in.SiteName, Buckets: in.Buckets, Warehouses: in.Warehouses,
		Objects: in.Objects, ReplicaCatalog: in.ReplicaCatalog, BucketConfig: in.BucketConfig,
		IAMRecords: in.IAMRecords, IAMDigest: in.IAMDigest}
	if in.Replication != nil {
		st := FromState(*in.Replication)
		w.Replication = &st
	}
	return w
}

// ToInfo returns the domain description a peer sent of itself.
func (w Info) ToInfo() replication.PeerInfo {
	in := replication.PeerInfo{DeploymentID: w.DeploymentID, SiteName: w.SiteName, Buckets: w.Buckets, Warehouses: w.Warehouses,
		Objects: w.Objects, ReplicaCatalog: w.ReplicaCatalog, BucketConfig: w.BucketConfig,
		IAMRecords: w.IAMRecords, IAMDigest: w.IAMDigest}
	if w.Replication != nil {
		st := w.Replication.ToState()
		in.Replication = &st
	}
	return in
}

// FromResyncJob returns the wire form of a resync job (its cursor stays
// local).
func FromResyncJob(j replication.ResyncJob) ResyncJob {
	return ResyncJob{ID: j.ID, Target: j.Target, State: j.State, Started: j.Started, Finished: j.Finished, Bucket: j.Bucket,
		Buckets: j.Buckets, Queued: j.Queued, Bytes: j.Bytes, LastError: j.LastError}
}

// ToResyncJob returns the domain form of a peer's resync job.
func (w ResyncJob) ToResyncJob() replication.ResyncJob {
	return replication.ResyncJob{ID: w.ID, Target: w.Target, State: w.State, Started: w.Started, Finished: w.Finished,
		Bucket: w.Bucket, Buckets: w.Buckets, Queued: w.Queued, Bytes: w.Bytes, LastError: w.LastError}
}
