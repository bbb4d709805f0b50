package objects

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/meta"
)

// Multipart limits, as S3 sets them.
const (
	MaxPartNumber = 10000
	MinPartSize   = 5 << 20
)

// Upload is a multipart upload in progress.
type Upload struct {
	UploadID    string             `msgpack:"id"`
	Key         string             `msgpack:"k"`
	Initiated   time.Time          `msgpack:"t"`
	ContentType string             `msgpack:"ct,omitempty"`
	UserMeta    map[string]string  `msgpack:"um,omitempty"`
	Headers     map[string]string  `msgpack:"hd,omitempty"`
	Tags        map[string]string  `msgpack:"tg,omitempty"`
	SSE         string             `msgpack:"se,omitempty"`
	Checksum    checksum.Algorithm `msgpack:"ck,omitempty"`
	// ChecksumType is how the object's checksum is formed from the parts'
	// (checksum.TypeFullObject or TypeComposite); an upload written
	// without one has its algorithm's default (see ObjectChecksumType).
	ChecksumType checksum.Type `msgpack:"cty,omitempty"`
	// KeyCheck is set on an SSE-C upload; every part must send that key.
	KeyCheck []byte `msgpack:"kc,omitempty"`
	// The object lock the upload's version asks for (see Version).
	LockMode    string `msgpack:"lm,omitempty"`
	RetainUntil int64  `msgpack:"lu,omitempty"`
	LegalHold   string `msgpack:"lh,omitempty"`
	// ACL is the canned ACL the upload's version gets (acl.go).
	ACL string `msgpack:"acl,omitempty"`
}

// Part is one uploaded part.
type Part struct {
	Number   int       `msgpack:"n"`
	Modified time.Time `msgpack:"t"`
	Segment  Segment   `msgpack:"s"`
}

// CompletePart names a part in CompleteMultipartUpload.
type CompletePart struct {
	Number   int
	ETag     string
	Checksum string // the part's additional checksum as the client sent it, if any
}

// ObjectChecksumType is how the upload's object checksum is formed (as S3
// reports it), "" when it has no checksum algorithm.
func (u *Upload) ObjectChecksumType() checksum.Type {
	switch {
	case u.Checksum == "":
		return ""
	case u.ChecksumType != "":
		return u.ChecksumType
	}
	return checksum.DefaultType(u.Checksum)
}

func newUploadID() string {
	var b [24]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func validUploadID(id string) bool {
	if len(id) != 48 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// CreateMultipartUpload starts an upload; opts carry the object's metadata
// (size and conditions are ignored).
func (l *Layer) CreateMultipartUpload(ctx context.Context, bucket, key string, opts PutOptions) (*Upload, error) {
	if err := ValidateNewKey(key); err != nil {
		return nil, err
	}
	b, err := l.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if err := ValidateLock(&b, opts.Lock, l.now()); err != nil {
		return nil, err
	}
	sse, err := l.resolveSSE(b, opts.SSE)
	if err != nil {
		return nil, err
	}
	if err := checkUploadChecksum(opts.Checksum, opts.ChecksumType); err != nil {
		return nil, err
	}
	var lk Version
	lk.setLock(opts.Lock)
	u := &Upload{
		LockMode: lk.LockMode, RetainUntil: lk.RetainUntil, LegalHold: lk.LegalHold,
		UploadID: newUploadID(), Key: key, Initiated: time.Now().UTC(),
		ContentType: opts.ContentType, UserMeta: opts.UserMeta, Headers: opts.Headers,
		Tags: opts.Tags, SSE: sse, Checksum: opts.Checksum, ChecksumType: opts.ChecksumType, ACL: opts.ACL,
	}
	if opts.CustomerKey != nil {
		if _, err := l.encryptionFor(bucket, key, "", opts.CustomerKey); err != nil {
			return nil, err
		}
		u.SSE, u.KeyCheck = "", newKeyCheck(opts.CustomerKey)
	}
	batch := l.meta.NewBatch()
	batch.Set(uploadKey(bucket, key, u.UploadID), encode(u))
	if c := l.lifecycleOf(bucket); c != nil {
		if at := c.UploadDue(key, u.Initiated.UnixNano(), l.lifecycleDay()); at > 0 {
			batch.Set(dueKey(bucket, at, key), nil)
		}
	}
	return u, batch.Commit(true)
}

// checkUploadChecksum holds a new upload's checksum algorithm and type:
// a type needs an algorithm, and the algorithm must be able to form it
// (FULL_OBJECT for the CRCs only, COMPOSITE for all but CRC64NVME).
func checkUploadChecksum(alg checksum.Algorithm, t checksum.Type) error {
	switch {
	case t == "":
		return nil
	case alg == "":
		return fmt.Errorf("%w: %s %s needs x-amz-checksum-algorithm", checksum.ErrUnsupportedType, checksum.HeaderType, t)
	case !t.Supports(alg):
		return fmt.Errorf("%w: the %s checksum type cannot be used with the %s checksum algorithm", checksum.ErrUnsupportedType, t, alg)
	}
	return nil
}

// GetUpload returns an upload in progress.
func (l *Layer) GetUpload(ctx context.Context, bucket, key, uploadID string) (*Upload, error) {
	if _, err := l.Bucket(ctx, bucket); err != nil {
		return nil, err
	}
	if !validUploadID(uploadID) {
		return nil, ErrUploadNotFound
	}
	raw, err := l.meta.Get(uploadKey(bucket, key, uploadID))
	if errors.Is(err, meta.ErrNotFound) {
		return nil, ErrUploadNotFound
	}
	if err != nil {
		return nil, err
	}
	u := &Upload{}
	return u, decode(raw, u)
}

// UploadPart stores one part durably. opts.Size, opts.Checksum and
// opts.Verify apply; re-uploading a part number replaces it.
func (l *Layer) UploadPart(ctx context.Context, bucket, key, uploadID string, number int, body io.Reader, opts PutOptions) (*Part, error) {
	if number < 1 || number > MaxPartNumber {
		return nil, fmt.Errorf("%w: part number must be 1..%d", ErrInvalidArgument, MaxPartNumber)
	}
	u, err := l.GetUpload(ctx, bucket, key, uploadID)
	if err != nil {
		return nil, err
	}
	b, err := l.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if err := l.checkQuota(&b, opts.Size); err != nil {
		return nil, err
	}
	alg := opts.Checksum
	if alg == "" {
		alg = u.Checksum
	}
	if err := checkCustomerKey(u.KeyCheck, opts.CustomerKey); err != nil {
		return nil, err
	}
	enc, err := l.encryptionFor(bucket, key, u.SSE, opts.CustomerKey)
	if err != nil {
		return nil, err
	}
	st, err := l.store(bucket, key, body, opts.Size, enc, alg)
	if err != nil {
		return nil, err
	}
	if opts.Verify != nil {
		if err := opts.Verify(st.md5, st.sums); err != nil {
			l.release(st.seg)
			return nil, err
		}
	}
	st.seg.Number = number
	st.seg.ETag = st.etag
	if alg != "" {
		st.seg.Checksum = map[string]string{string(alg): st.sums[alg]}
	}
	p := &Part{Number: number, Modified: time.Now().UTC(), Segment: st.seg}
	unlock := l.lockKey(bucket, key)
	defer unlock()
	if _, err := l.GetUpload(ctx, bucket, key, uploadID); err != nil {
		l.release(st.seg)
		return nil, err
	}
	old, _ := l.getPart(uploadID, number)
	batch := l.meta.NewBatch()
	batch.Set(partKey(uploadID, number), encode(p))
	adopt(batch, st.seg)
	if old != nil {
		disown(batch, old.Segment)
	}
	if err := l.commitPlain(batch, true); err != nil {
		l.release(st.seg)
		return nil, err
	}
	if old != nil {
		l.release(old.Segment)
	}
	return p, nil
}

func (l *Layer) getPart(uploadID string, n int) (*Part, error) {
	raw, err := l.meta.Get(partKey(uploadID, n))
	if err != nil {
		return nil, err
	}
	p := &Part{}
	return p, decode(raw, p)
}

// ListParts returns parts with numbers above marker, at most max.
func (l *Layer) ListParts(ctx context.Context, bucket, key, uploadID string, marker, max int) (parts []Part, truncated bool, err error) {
	if _, err := l.GetUpload(ctx, bucket, key, uploadID); err != nil {
		return nil, false, err
	}
	lo := partKey(uploadID, marker+1)
	err = meta.Scan(l.meta, lo, meta.PrefixEnd(partPrefix(uploadID)), func(k, raw []byte) (bool, error) {
		if len(parts) >= max {
			truncated = true
			return false, nil
		}
		p := Part{}
		if err := decode(raw, &p); err != nil {
			return false, err
		}
		parts = append(parts, p)
		return true, nil
	})
	return parts, truncated, err
}

// allParts returns every part of an upload, by number.
func (l *Layer) allParts(uploadID string) (map[int]*Part, error) {
	parts := map[int]*Part{}
	err := meta.Scan(l.meta, partPrefix(uploadID), meta.PrefixEnd(partPrefix(uploadID)), func(k, raw []byte) (bool, error) {
		p := &Part{}
		if err := decode(raw, p); err != nil {
			return false, err
		}
		parts[p.Number] = p
		return true, nil
	})
	return parts, err
}

// CompleteMultipartUpload assembles the listed parts into a new version.
func (l *Layer) CompleteMultipartUpload(ctx context.Context, bucket, key, uploadID string, list []CompletePart, cond PutOptions) (*Version, error) {
	u, err := l.GetUpload(ctx, bucket, key, uploadID)
	if errors.Is(err, ErrUploadNotFound) {
		if v := l.completedBy(ctx, bucket, key, uploadID); v != nil {
			return v, nil // a retried complete: S3 answers it again
		}
	}
	if err != nil {
		return nil, err
	}
	if err := l.checkWriteConditions(bucket, key, cond.IfMatch, cond.IfNoneMatch); err != nil {
		return nil, err
	}
	have, err := l.allParts(uploadID)
	if err != nil {
		return nil, err
	}
	v, used, err := assemble(u, have, list, cond.ObjectChecksum)
	if err != nil {
		return nil, err
	}
	v.ContentType, v.UserMeta, v.Headers, v.Tags, v.SSE, v.KeyCheck = u.ContentType, u.UserMeta, u.Headers, u.Tags, u.SSE, u.KeyCheck
	v.UploadID = uploadID
	v.LockMode, v.RetainUntil, v.LegalHold = u.LockMode, u.RetainUntil, u.LegalHold
	v.ACL = u.ACL
	var unused []Segment
	for n, p := range have {
		if !used[n] {
			unused = append(unused, p.Segment)
		}
	}
	extra := func(b meta.Batch) {
		b.Delete(uploadKey(bucket, key, uploadID))
		b.DeleteRange(partPrefix(uploadID), meta.PrefixEnd(partPrefix(uploadID)))
		disown(b, unused...)
	}
	if err := l.commitVersionWith(ctx, bucket, key, v, cond.IfMatch, cond.IfNoneMatch, extra); err != nil {
		return nil, err
	}
	l.release(unused...)
	return v, nil
}

// completedBy returns the key's current version if uploadID completed it,
// else nil.
func (l *Layer) completedBy(ctx context.Context, bucket, key, uploadID string) *Version {
	v, err := l.HeadObject(ctx, bucket, key, "")
	if err != nil || v.UploadID == "" || v.UploadID != uploadID {
		return nil
	}
	return v
}

// assemble is the pure decision of CompleteMultipartUpload: it checks the
// client's part list against the stored parts and builds the version. Its
// checksum, with the upload's algorithm, is formed from the parts' as the
// upload's type says: COMPOSITE (the checksum of the part checksums, with
// a -N suffix) or FULL_OBJECT (the CRC of the whole object, combined from
// the parts' CRCs and sizes). want, when the client sent one in the
// upload's form, must be it.
func assemble(u *Upload, have map[int]*Part, list []CompletePart, want string) (*Version, map[int]bool, error) {
	if len(list) == 0 {
		return nil, nil, fmt.Errorf("%w: no parts", ErrInvalidPart)
	}
	for i := 1; i < len(list); i++ {
		if list[i].Number <= list[i-1].Number {
			return nil, nil, ErrInvalidPartOrder
		}
	}
	v := &Version{Multipart: true}
	used := map[int]bool{}
	var md5s []string
	var sums []checksum.Part // the parts' checksums in the upload's algorithm
	for i, cp := range list {
		p, ok := have[cp.Number]
		if !ok || strings.Trim(cp.ETag, `"`) != p.Segment.ETag {
			return nil, nil, fmt.Errorf("%w: part %d", ErrInvalidPart, cp.Number)
		}
		if i < len(list)-1 && p.Segment.Size < MinPartSize {
			return nil, nil, fmt.Errorf("%w: part %d is %d bytes", ErrEntityTooSmall, cp.Number, p.Segment.Size)
		}
		if u.Checksum != "" && cp.Checksum != "" && cp.Checksum != p.Segment.Checksum[string(u.Checksum)] {
			return nil, nil, fmt.Errorf("%w: part %d checksum", ErrInvalidPart, cp.Number)
		}
		used[cp.Number] = true
		v.Segments = append(v.Segments, p.Segment)
		v.Size += p.Segment.Size
		md5s = append(md5s, p.Segment.ETag)
		sums = append(sums, checksum.Part{Checksum: p.Segment.Checksum[string(u.Checksum)], Size: p.Segment.Size})
	}
	etag, err := checksum.MultipartETag(md5s)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrInvalidPart, err)
	}
	v.ETag = etag
	if u.Checksum != "" {
		typ := u.ObjectChecksumType()
		var c string
		if typ == checksum.TypeFullObject {
			c, err = checksum.FullObjectCRC(u.Checksum, sums)
		} else {
			values := make([]string, len(sums))
			for i, p := range sums {
				values[i] = p.Checksum
			}
			c, err = checksum.Composite(u.Checksum, values)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrInvalidPart, err)
		}
		// A plain digest sent for a COMPOSITE upload is taken unchecked,
		// as before FULL_OBJECT uploads were told apart.
		if want != "" && want != c && (typ == checksum.TypeFullObject || strings.Contains(want, "-")) {
			return nil, nil, fmt.Errorf("%w: the %s you specified is not the object's, %s", checksum.ErrBadDigest, u.Checksum.HeaderName(), c)
		}
		v.Checksums = map[string]string{string(u.Checksum): c}
	}
	return v, used, nil
}

// AbortMultipartUpload discards an upload and its parts.
func (l *Layer) AbortMultipartUpload(ctx context.Context, bucket, key, uploadID string) error {
	unlock := l.lockKey(bucket, key)
	defer unlock()
	if _, err := l.GetUpload(ctx, bucket, key, uploadID); err != nil {
		return err
	}
	return l.abortUploadLocked(bucket, key, uploadID)
}

// abortUploadLocked discards an upload and its parts; the key's lock is
// held.
func (l *Layer) abortUploadLocked(bucket, key, uploadID string) error {
	if _, err := l.meta.Get(uploadKey(bucket, key, uploadID)); err != nil {
		if errors.Is(err, meta.ErrNotFound) {
			return ErrUploadNotFound
		}
		return err
	}
	have, err := l.allParts(uploadID)
	if err != nil {
		return err
	}
	var segs []Segment
	for _, p := range have {
		segs = append(segs, p.Segment)
	}
	batch := l.meta.NewBatch()
	batch.Delete(uploadKey(bucket, key, uploadID))
	batch.DeleteRange(partPrefix(uploadID), meta.PrefixEnd(partPrefix(uploadID)))
	disown(batch, segs...)
	if err := l.commitPlain(batch, true); err != nil {
		return err
	}
	l.release(segs...)
	return nil
}

// UploadListOptions select a page of ListMultipartUploads.
type UploadListOptions struct {
	Prefix, Delimiter, KeyMarker, UploadIDMarker string
	MaxUploads                                   int
}

// UploadListResult is a page of uploads.
type UploadListResult struct {
	Uploads                           []Upload
	CommonPrefixes                    []string
	IsTruncated                       bool
	NextKeyMarker, NextUploadIDMarker string
}

// ListMultipartUploads lists uploads in progress by key, then upload ID.
func (l *Layer) ListMultipartUploads(ctx context.Context, bucket string, opts UploadListOptions) (UploadListResult, error) {
	var res UploadListResult
	if _, err := l.Bucket(ctx, bucket); err != nil {
		return res, err
	}
	p := &pager{opts: ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter, MaxKeys: opts.MaxUploads}}
	base := uploadPrefix(bucket)
	lower := escapeKey(append([]byte(nil), base...), opts.Prefix)
	upper := meta.PrefixEnd(lower)
	// A later page starts at its marker's key (escaping keeps keys'
	// order), not at the first upload under the prefix.
	if m := escapeKey(append([]byte(nil), base...), opts.KeyMarker); bytes.Compare(m, lower) > 0 {
		lower = m
	}
	if bytes.Compare(lower, upper) >= 0 {
		return res, nil // the marker is past every key under the prefix
	}
	err := meta.Scan(l.meta, lower, upper, func(k, raw []byte) (bool, error) {
		key, id, ok := splitEscaped(k[len(base):])
		if !ok || !strings.HasPrefix(key, opts.Prefix) {
			return true, nil
		}
		if opts.KeyMarker != "" && (key < opts.KeyMarker || key == opts.KeyMarker && (opts.UploadIDMarker == "" || id <= opts.UploadIDMarker)) {
			return true, nil
		}
		if cp := p.commonPrefix(key); cp != "" {
			if cp == p.lastCP {
				return true, nil
			}
			if p.full() {
				res.IsTruncated = true
				return false, nil
			}
			p.addPrefix(cp)
			return true, nil
		}
		if p.full() {
			res.IsTruncated = true
			return false, nil
		}
		u := Upload{}
		if err := decode(raw, &u); err != nil {
			return false, err
		}
		res.Uploads = append(res.Uploads, u)
		p.count++
		res.NextKeyMarker, res.NextUploadIDMarker = key, id
		return true, nil
	})
	res.CommonPrefixes = p.res.CommonPrefixes
	sort.Strings(res.CommonPrefixes)
	return res, err
}
