package objects

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/meta"
)

// NullVersionID is the version ID of the object written while versioning was
// never enabled or is suspended.
const NullVersionID = "null"

// Versioning states of a bucket, as S3 names them.
const (
	VersioningOff       = ""
	VersioningEnabled   = "Enabled"
	VersioningSuspended = "Suspended"
)

// Bucket is a bucket record.
type Bucket struct {
	Name       string            `msgpack:"n"`
	Created    time.Time         `msgpack:"c"`
	Versioning string            `msgpack:"v,omitempty"`
	Tags       map[string]string `msgpack:"t,omitempty"`
	Policy     []byte            `msgpack:"p,omitempty"`
	// Encryption is the default encryption algorithm ("AES256"), or empty.
	Encryption string `msgpack:"e,omitempty"`
	// ModTime orders bucket-level changes (HLC), for replication.
	ModTime int64 `msgpack:"m,omitempty"`
	// Warehouse marks a bucket that also holds Iceberg tables served by the
	// built-in catalog.
	Warehouse bool `msgpack:"w,omitempty"`
	// FieldTimes is the HLC time each setting last changed at (keys
	// FieldVersioning ...), so that replication merges concurrent changes
	// of different settings per field.
	FieldTimes map[string]int64 `msgpack:"ft,omitempty"`
	// ObjectLock is set when the bucket has object lock (lock.go); it
	// holds the default retention.
	ObjectLock *LockConfig `msgpack:"ol,omitempty"`
	// CORS is the bucket's CORS configuration (cors.go), canonical XML.
	CORS []byte `msgpack:"cr,omitempty"`
	// ACL is the bucket's canned ACL (acl.go); "" is private.
	ACL string `msgpack:"acl,omitempty"`
	// Lifecycle is the bucket's lifecycle configuration (lifecycle.go),
	// the S3 edge's validated XML.
	Lifecycle []byte `msgpack:"lc,omitempty"`
	// Quota is the bucket's hard quota in bytes of live objects (quota.go);
	// 0 is none.
	Quota int64 `msgpack:"qt,omitempty"`
}

// Bucket settings that replicate, as FieldTimes names them.
const (
	FieldVersioning = "versioning"
	FieldTags       = "tags"
	FieldPolicy     = "policy"
	FieldEncryption = "encryption"
	FieldWarehouse  = "warehouse"
)

// bucketFields reads and writes each replicated setting of a bucket.
var bucketFields = []struct {
	name  string
	equal func(a, b *Bucket) bool
	copy  func(dst, src *Bucket)
}{
	{FieldVersioning, func(a, b *Bucket) bool { return a.Versioning == b.Versioning }, func(d, s *Bucket) { d.Versioning = s.Versioning }},
	{FieldTags, func(a, b *Bucket) bool { return maps.Equal(a.Tags, b.Tags) }, func(d, s *Bucket) { d.Tags = maps.Clone(s.Tags) }},
	{FieldPolicy, func(a, b *Bucket) bool { return bytes.Equal(a.Policy, b.Policy) }, func(d, s *Bucket) { d.Policy = bytes.Clone(s.Policy) }},
	{FieldEncryption, func(a, b *Bucket) bool { return a.Encryption == b.Encryption }, func(d, s *Bucket) { d.Encryption = s.Encryption }},
	{FieldWarehouse, func(a, b *Bucket) bool { return a.Warehouse == b.Warehouse }, func(d, s *Bucket) { d.Warehouse = s.Warehouse }},
	{FieldObjectLock, func(a, b *Bucket) bool { return lockConfigEqual(a.ObjectLock, b.ObjectLock) }, mergeLockConfig},
	{FieldCORS, func(a, b *Bucket) bool { return bytes.Equal(a.CORS, b.CORS) }, func(d, s *Bucket) { d.CORS = bytes.Clone(s.CORS) }},
	{FieldLifecycle, func(a, b *Bucket) bool { return bytes.Equal(a.Lifecycle, b.Lifecycle) }, func(d, s *Bucket) { d.Lifecycle = bytes.Clone(s.Lifecycle) }},
	{FieldACL, func(a, b *Bucket) bool { return a.ACL == b.ACL }, func(d, s *Bucket) { d.ACL = s.ACL }},
	{FieldQuota, func(a, b *Bucket) bool { return a.Quota == b.Quota }, func(d, s *Bucket) { d.Quota = s.Quota }},
}

// fieldTime is when a setting last changed (the bucket's creation for one
// never changed).
func (b *Bucket) fieldTime(f string) int64 {
	if t, ok := b.FieldTimes[f]; ok {
		return t
	}
	return 0
}

// lastChange is the HLC time of the bucket's latest change: its creation
// or any setting's.
func (b *Bucket) lastChange() int64 {
	t := b.ModTime
	for _, ft := range b.FieldTimes {
		t = max(t, ft)
	}
	return t
}

// Segment is one stored piece of an object's data: a blob file or inline
// bytes. A simple PUT has one segment; a completed multipart upload has one
// per part, in order.
type Segment struct {
	Number   int               `msgpack:"n,omitempty"`
	Size     int64             `msgpack:"s"` // plaintext size
	ETag     string            `msgpack:"e,omitempty"`
	BlobID   string            `msgpack:"b,omitempty"`
	Inline   []byte            `msgpack:"i,omitempty"`
	Checksum map[string]string `msgpack:"c,omitempty"`
	// SealedKey is this segment's data key, sealed by the site key; empty
	// when not encrypted.
	SealedKey []byte `msgpack:"k,omitempty"`
}

// Version is one object version (or delete marker).
type Version struct {
	VersionID    string            `msgpack:"id"`
	ModTime      int64             `msgpack:"mt"` // HLC, Unix nanoseconds
	DeleteMarker bool              `msgpack:"dm,omitempty"`
	Size         int64             `msgpack:"sz"`
	ETag         string            `msgpack:"et,omitempty"`
	ContentType  string            `msgpack:"ct,omitempty"`
	UserMeta     map[string]string `msgpack:"um,omitempty"` // keys lower-case, without x-amz-meta-
	Headers      map[string]string `msgpack:"hd,omitempty"` // Cache-Control, Content-Disposition, ...
	Checksums    map[string]string `msgpack:"ck,omitempty"` // algorithm -> base64 (composite carries -N)
	Tags         map[string]string `msgpack:"tg,omitempty"`
	SSE          string            `msgpack:"se,omitempty"` // "AES256" when encrypted at rest
	Segments     []Segment         `msgpack:"sg,omitempty"`
	Multipart    bool              `msgpack:"mp,omitempty"`
	Origin       string            `msgpack:"or,omitempty"` // site that wrote it
	// KeyCheck is set on an SSE-C version: a salted HMAC of the client's
	// key (ssec.go), never the key.
	KeyCheck []byte `msgpack:"kc,omitempty"`
	// UploadID is the multipart upload this version completed (local to
	// the site that completed it), so a retried complete finds it.
	UploadID string `msgpack:"ui,omitempty"`
	// MetaTime is the HLC time of the last metadata-only change (tags); 0
	// means none since ModTime.
	MetaTime int64 `msgpack:"mm,omitempty"`
	// Object lock (lock.go): the retention mode (GOVERNANCE, COMPLIANCE or
	// empty), its retain-until date (Unix nanoseconds) and the legal hold
	// (ON, OFF or empty: never set). Changes are metadata changes.
	LockMode    string `msgpack:"lm,omitempty"`
	RetainUntil int64  `msgpack:"lu,omitempty"`
	LegalHold   string `msgpack:"lh,omitempty"`
	// ACL is the version's canned ACL (acl.go); "" is private. Changes
	// are metadata changes.
	ACL string `msgpack:"acl,omitempty"`

	// Replication state (site replication).
	// Targets maps each peer site ID to PENDING, COMPLETED or FAILED on the
	// site that wrote the version; empty on a received copy.
	Targets map[string]string `msgpack:"rt,omitempty"`
	// ReplicaStatus is REPLICA on a copy received from a peer.
	ReplicaStatus string `msgpack:"rs,omitempty"`
	// ReplicaTimestamp is when a copy was received (on the replica), or the
	// last successful send (on the source); Unix nanoseconds.
	ReplicaTimestamp int64 `msgpack:"rts,omitempty"`
	// ActivityTimestamp is the last replication attempt; Unix nanoseconds.
	ActivityTimestamp int64 `msgpack:"rat,omitempty"`
}

// Copy returns a copy of v that shares nothing v's owner may change: its
// maps and segments are copied; its byte slices (inline data, sealed keys,
// the key check), which no writer changes once a record holds them, are
// shared.
func (v *Version) Copy() *Version {
	c := *v
	c.UserMeta, c.Headers, c.Checksums = maps.Clone(v.UserMeta), maps.Clone(v.Headers), maps.Clone(v.Checksums)
	c.Tags, c.Targets = maps.Clone(v.Tags), maps.Clone(v.Targets)
	c.Segments = slices.Clone(v.Segments)
	for i := range c.Segments {
		c.Segments[i].Checksum = maps.Clone(c.Segments[i].Checksum)
	}
	return &c
}

// Replication status values.
const (
	StatusPending   = "PENDING"
	StatusCompleted = "COMPLETED"
	StatusFailed    = "FAILED"
	StatusReplica   = "REPLICA"
)

// ReplicationStatus is the version's x-amz-replication-status: REPLICA on a
// received copy; on the source FAILED if any target failed, else PENDING if
// any is pending, else COMPLETED; empty when the version has no targets.
func (v *Version) ReplicationStatus() string {
	if v.ReplicaStatus != "" {
		return v.ReplicaStatus
	}
	if len(v.Targets) == 0 {
		return ""
	}
	st := StatusCompleted
	for _, s := range v.Targets {
		switch s {
		case StatusFailed:
			return StatusFailed
		case StatusPending:
			st = StatusPending
		}
	}
	return st
}

// Stamp is the version's replication ordering: modification time, then
// metadata time.
func (v *Version) Stamp() (int64, int64) { return v.ModTime, v.MetaTime }

// LastModified returns the version's modification time.
func (v *Version) LastModified() time.Time { return time.Unix(0, v.ModTime).UTC() }

// IsNull reports whether this is the null version.
func (v *Version) IsNull() bool { return v.VersionID == NullVersionID }

// latest is the summary kept under l/ for listing without reading versions.
type latest struct {
	VersionID    string `msgpack:"id"`
	ModTime      int64  `msgpack:"mt"`
	Origin       string `msgpack:"or,omitempty"`
	DeleteMarker bool   `msgpack:"dm,omitempty"`
	Size         int64  `msgpack:"sz"`
	ETag         string `msgpack:"et,omitempty"`
	Listed              // what a listing shows besides, inlined in the record
}

func summarize(v *Version) latest {
	return latest{VersionID: v.VersionID, ModTime: v.ModTime, Origin: v.Origin, DeleteMarker: v.DeleteMarker, Size: v.Size, ETag: v.ETag,
		Listed: v.Listed()}
}

// HeaderStorageClass is the header under which a version keeps a storage
// class other than STANDARD that its write named.
const HeaderStorageClass = "X-Amz-Storage-Class"

// Listed is what a listing shows of a version besides its key, size, time
// and ETag: its checksum's algorithm and type (FULL_OBJECT or COMPOSITE;
// empty without one) and its storage class (empty for STANDARD). The
// latest-version summary a listing reads stores it.
type Listed struct {
	ChecksumAlgorithm string `msgpack:"ca,omitempty"`
	ChecksumType      string `msgpack:"cy,omitempty"`
	StorageClass      string `msgpack:"sc,omitempty"`
}

// Listed returns what a listing shows of v. Of several checksums, the
// algorithm first by name is shown.
func (v *Version) Listed() Listed {
	l := Listed{StorageClass: v.Headers[HeaderStorageClass]}
	for alg, val := range v.Checksums {
		if l.ChecksumAlgorithm == "" || alg < l.ChecksumAlgorithm {
			l.ChecksumAlgorithm, l.ChecksumType = alg, string(ChecksumTypeOf(val))
		}
	}
	return l
}

// ChecksumTypeOf is the type of a stored checksum value: a composite one
// carries its part count after a dash.
func ChecksumTypeOf(val string) checksum.Type {
	if strings.Contains(val, "-") {
		return checksum.TypeComposite
	}
	return checksum.TypeFullObject
}

func encode(v any) []byte {
	// msgpack.Marshal, into a buffer sized up front: a version holding
	// its data inline would otherwise grow it by doubling, copying the
	// data each time.
	buf := bytes.NewBuffer(make([]byte, 0, encodedHint(v)))
	encodeTo(buf, v)
	return buf.Bytes()
}

// encodedHint is about how large v's encoding is.
func encodedHint(v any) int {
	hint := 256
	if ver, ok := v.(*Version); ok {
		for _, sg := range ver.Segments {
			hint += len(sg.Inline) + 64
		}
	}
	return hint
}

func encodeTo(buf *bytes.Buffer, v any) {
	switch r := v.(type) {
	case *Version:
		buf.Write(appendVersion(buf.AvailableBuffer(), r))
		return
	case *latest:
		buf.Write(appendLatest(buf.AvailableBuffer(), r))
		return
	case latest:
		buf.Write(appendLatest(buf.AvailableBuffer(), &r))
		return
	case *targetStatus:
		buf.Write(appendStatus(buf.AvailableBuffer(), r))
		return
	}
	enc := msgpack.GetEncoder()
	enc.Reset(buf)
	err := enc.Encode(v)
	msgpack.PutEncoder(enc)
	if err != nil {
		panic(err) // only our own record types are encoded; they always marshal
	}
}

// setRecord adds v's encoding under key to batch, encoded in a buffer
// shared between writes (a batch keeps a copy of what it is given), so
// that the records of the write paths, a version with its inline data
// among them, cost no buffer of their own.
func setRecord(batch meta.Batch, key []byte, v any) {
	buf := recordBufs.Get().(*bytes.Buffer)
	buf.Reset()
	buf.Grow(encodedHint(v))
	encodeTo(buf, v)
	batch.Set(key, buf.Bytes())
	if buf.Cap() <= maxPooledRecord {
		recordBufs.Put(buf)
	}
}

var recordBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledRecord bounds the buffers recordBufs keeps: one that grew for
// a version with much inline data is left to the collector.
const maxPooledRecord = 256 << 10

func decode(b []byte, v any) error {
	switch r := v.(type) {
	case *Version:
		return decodeVersion(b, r)
	case *latest:
		return decodeLatest(b, r)
	case *targetStatus:
		return decodeStatus(b, r)
	}
	return msgpack.Unmarshal(b, v)
}

// newVersionID returns a random version ID in UUID form.
func newVersionID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// validVersionID accepts "null" and IDs of the form newVersionID makes.
func validVersionID(id string) bool {
	if id == NullVersionID {
		return true
	}
	if len(id) != 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
