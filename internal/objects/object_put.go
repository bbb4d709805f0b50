package objects

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/meta"
)

// MaxKeyLength is the longest object key S3 allows, in bytes.
const MaxKeyLength = 1024

// ValidateKey checks an object key. Keys are opaque: "..", "./" and any
// other byte sequence are stored as plain keys, never as paths.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return ErrInvalidKey
	case len(key) > MaxKeyLength:
		return ErrKeyTooLong
	case !utf8.ValidString(key):
		return ErrInvalidKey
	}
	return nil
}

// ValidateNewKey checks the key of a new object: ValidateKey, and no
// character XML 1.0 cannot carry (C0 controls other than tab, line feed
// and carriage return; U+FFFE, U+FFFF), which no S3 listing could name.
// Reads and deletes take any key ValidateKey accepts, so an object stored
// before this rule stays reachable.
func ValidateNewKey(key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	for _, r := range key {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
			return fmt.Errorf("%w: control character %U", ErrInvalidKey, r)
		}
	}
	return nil
}

// PutOptions describe one object write.
type PutOptions struct {
	// Size is the body length, or -1 if unknown until EOF.
	Size        int64
	ContentType string
	UserMeta    map[string]string
	Headers     map[string]string
	Tags        map[string]string
	// ACL is the new version's canned ACL in stored form (acl.go).
	ACL string
	// SSE requests encryption at rest ("AES256"); the bucket default applies
	// when empty.
	SSE string
	// Checksum is the additional checksum to compute and store; a
	// PutObject (or copy) naming none stores DefaultChecksum.
	Checksum checksum.Algorithm
	// ChecksumType is how CreateMultipartUpload's object checksum is
	// formed from its parts' (COMPOSITE or FULL_OBJECT); "" takes the
	// algorithm's default (checksum.DefaultType).
	ChecksumType checksum.Type
	// ObjectChecksum, on CompleteMultipartUpload, is the object checksum
	// the client sent (its upload's algorithm): the upload completes only
	// if the one formed from the parts is the same.
	ObjectChecksum string
	// Verify, when set, is called once the whole body is read with the
	// computed MD5 (hex) and checksums; an error aborts the write.
	Verify func(md5Hex string, sums map[checksum.Algorithm]string) error
	// IfMatch fails the write unless the current version has this ETag.
	IfMatch string
	// IfNoneMatch "*" fails the write if the key exists, an ETag list if
	// the current version has one of them.
	IfNoneMatch string
	// CustomerKey, when set, encrypts with the client's key (SSE-C) instead
	// of SSE-S3; UploadPart requires the upload's key.
	CustomerKey []byte
	// Lock is the object lock the new version asks for (lock.go); the
	// bucket's default retention applies when it names no retention.
	Lock Lock
}

// DefaultChecksum is the checksum a single-part write stores when its
// client names none, as S3 does since it made data integrity checks the
// default: any later read can be verified end to end. A multipart upload
// has an object checksum only when it names an algorithm (its parts may
// carry another each).
const DefaultChecksum = checksum.CRC64NVME

// stored is object data written to disk (or held inline) but not yet
// referenced by any metadata.
type stored struct {
	seg Segment
	md5 string
	// etag is the ETag of the data: its MD5, or opaqueETag under a
	// customer key.
	etag string
	sums map[checksum.Algorithm]string
}

// PutObject writes a new version of bucket/key from body.
func (l *Layer) PutObject(ctx context.Context, bucket, key string, body io.Reader, opts PutOptions) (*Version, error) {
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
	if err := l.checkQuota(&b, opts.Size); err != nil {
		return nil, err
	}
	sse, err := l.resolveSSE(b, opts.SSE)
	if err != nil {
		return nil, err
	}
	var keyCheck []byte
	if opts.CustomerKey != nil {
		sse, keyCheck = "", newKeyCheck(opts.CustomerKey) // SSE-C replaces any default
	}
	enc, err := l.encryptionFor(bucket, key, sse, opts.CustomerKey)
	if err != nil {
		return nil, err
	}
	if err := l.checkWriteConditions(bucket, key, opts.IfMatch, opts.IfNoneMatch); err != nil {
		return nil, err
	}
	alg := opts.Checksum
	if alg == "" {
		alg = DefaultChecksum
	}
	st, err := l.store(bucket, key, body, opts.Size, enc, alg)
	if err != nil {
		return nil, err
	}
	if opts.Size < 0 {
		// The size was not known before the body: check it now.
		if err := l.checkQuota(&b, st.seg.Size); err != nil {
			l.release(st.seg)
			return nil, err
		}
	}
	if opts.Verify != nil {
		if err := opts.Verify(st.md5, st.sums); err != nil {
			l.release(st.seg)
			return nil, err
		}
	}
	v := &Version{
		Size: st.seg.Size, ETag: st.etag, ContentType: opts.ContentType,
		UserMeta: opts.UserMeta, Headers: opts.Headers, Tags: opts.Tags, ACL: opts.ACL,
		Segments: []Segment{st.seg}, SSE: sse, KeyCheck: keyCheck,
	}
	v.setLock(opts.Lock)
	v.Checksums = map[string]string{string(alg): st.sums[alg]}
	if err := l.commitVersion(ctx, bucket, key, v, opts.IfMatch, opts.IfNoneMatch); err != nil {
		l.release(st.seg)
		return nil, err
	}
	return v, nil
}

func (l *Layer) resolveSSE(b Bucket, requested string) (string, error) {
	sse := requested
	if sse == "" {
		sse = b.Encryption
	}
	if sse != "" && sse != SSEAlgorithm {
		return "", fmt.Errorf("%w: server-side encryption %q", ErrInvalidArgument, sse)
	}
	if sse != "" && l.cfg.Cipher == nil {
		return "", ErrSSEUnavailable
	}
	return sse, nil
}

// store reads body to its end, hashing the plaintext, encrypting it when
// enc is set, and makes the data of object bucket/key durable: inline when
// small, else in a fsynced blob. Plaintext of an encrypted object never
// touches the disk.
func (l *Layer) store(bucket, key string, body io.Reader, size int64, enc *encryption, alg checksum.Algorithm) (*stored, error) {
	if err := l.room(size); err != nil {
		return nil, err
	}
	var algs []checksum.Algorithm
	if alg != "" {
		algs = append(algs, alg)
	}
	hs, err := checksum.NewSet(algs...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidArgument, err)
	}
	var seg Segment
	var dk []byte
	if enc != nil {
		var sealed []byte
		if dk, sealed, err = enc.c.NewKey(enc.aad); err != nil {
			return nil, err
		}
		seg.SealedKey = sealed
	}
	if rb, ok := body.(ElsewhereBody); ok && (size < 0 || size > l.cfg.InlineLimit) && rb.CanStore(1, enc != nil) {
		blobs := []ElsewhereBlob{{Size: -1, DataKey: dk}}
		got, err := l.storeElsewhere(rb, bucket, key, blobs, algs)
		if err != nil {
			return nil, err
		}
		seg.BlobID, seg.Size = blobs[0].ID, got[0].Size
		return l.finishStore(seg, size, got[0].MD5, got[0].Sums, enc)
	}
	src := io.TeeReader(body, hs)
	if enc != nil {
		if src, err = enc.c.Encrypt(dk, src); err != nil {
			return nil, err
		}
	}
	if size >= 0 && size <= l.cfg.InlineLimit {
		seg.Inline, err = ReadSized(src, size)
	} else {
		err = l.storeBlob(&seg, src, bucket, key)
	}
	if err != nil {
		return nil, err
	}
	seg.Size = hs.Size()
	md5Hex, sums := hs.Sum()
	return l.finishStore(seg, size, md5Hex, sums, enc)
}

// finishStore describes seg, the data just made durable with its MD5 and sums,
// once it holds the size the writer declared (-1: none declared); if it
// does not, it releases seg's blob.
func (l *Layer) finishStore(seg Segment, size int64, md5Hex string, sums map[checksum.Algorithm]string, enc *encryption) (*stored, error) {
	if size >= 0 && seg.Size != size {
		l.release(seg)
		return nil, ErrIncompleteBody
	}
	st := &stored{seg: seg, md5: md5Hex, etag: md5Hex, sums: sums}
	if enc != nil && enc.customerKey != nil {
		st.etag = opaqueETag(enc.customerKey, md5Hex)
	}
	return st, nil
}

// ReadSized reads r to its end, as io.ReadAll does, into a buffer sized
// for the size the caller expects (one allocation, no copy when r holds
// exactly size bytes; it grows past size should r hold more). The result
// is never nil.
func ReadSized(r io.Reader, size int64) ([]byte, error) {
	buf := make([]byte, 0, max(size, 0)+1) // +1: room to see the end without growing
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// checkWriteConditions evaluates If-Match/If-None-Match before the body is
// read, so a doomed write fails fast; commitVersion checks again under the
// key lock.
func (l *Layer) checkWriteConditions(bucket, key, ifMatch, ifNoneMatch string) error {
	if ifMatch == "" && ifNoneMatch == "" {
		return nil
	}
	cur, err := l.latest(bucket, key)
	if err != nil && !errors.Is(err, ErrObjectNotFound) {
		return err
	}
	return evalWriteConditions(cur, ifMatch, ifNoneMatch, ErrObjectNotFound)
}

// evalWriteConditions is the pure decision for conditional writes; cur is
// nil when the key has no live version. A condition that does not hold is
// ErrPreconditionFailed, also when checked again under the key lock at
// commit: of racing writes with If-None-Match: * the first to commit wins
// and the others get 412, as in S3. gone is the answer to If-Match on a
// key with no live version: ErrObjectNotFound before the body is read,
// ErrConditionalConflict at commit (it was deleted meanwhile; S3's 409).
func evalWriteConditions(cur *latest, ifMatch, ifNoneMatch string, gone error) error {
	fail := ErrPreconditionFailed
	live := cur != nil && !cur.DeleteMarker
	if ifNoneMatch != "" && live && ETagMatches(ifNoneMatch, cur.ETag) {
		return fail // "*" matches any live version, a list one of its ETags
	}
	if ifMatch != "" {
		if !live {
			return gone
		}
		if !ETagMatches(ifMatch, cur.ETag) {
			return fail
		}
	}
	return nil
}

// ETagMatches reports whether an If-Match / If-None-Match style list
// ("a", "\"a\"", "W/\"a\"", "*") names etag.
func ETagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		t = strings.TrimPrefix(t, "W/")
		if t == "*" || strings.Trim(t, `"`) == etag {
			return true
		}
	}
	return false
}

// commitVersion assigns the version its ID and time and commits it as the
// key's latest, durably, replacing a null version when versioning is not
// enabled.
func (l *Layer) commitVersion(ctx context.Context, bucket, key string, v *Version, ifMatch, ifNoneMatch string) error {
	return l.commitVersionWith(ctx, bucket, key, v, ifMatch, ifNoneMatch, nil)
}

// commitVersionWith is commitVersion with extra writes (extra may be nil)
// committed in the same batch.
func (l *Layer) commitVersionWith(ctx context.Context, bucket, key string, v *Version, ifMatch, ifNoneMatch string, extra func(meta.Batch)) error {
	unlock := l.lockKey(bucket, key)
	defer unlock()
	b, err := l.Bucket(ctx, bucket)
	if err != nil {
		return err
	}
	cur, err := l.latest(bucket, key)
	if err != nil && !errors.Is(err, ErrObjectNotFound) {
		return err
	}
	if err := evalWriteConditions(cur, ifMatch, ifNoneMatch, ErrConditionalConflict); err != nil {
		return err
	}
	if err := l.lockNewVersion(&b, v); err != nil {
		return err
	}
	v.ModTime = l.cfg.Clock.Now()
	v.Origin = l.cfg.SiteID
	v.VersionID = NullVersionID
	if b.Versioning == VersioningEnabled {
		v.VersionID = newVersionID()
	}
	batch := l.meta.NewBatch()
	var old *Version
	// A key has its latest record exactly while it has a version (every
	// write of a version sets it when it is missing; a removal deletes it
	// with the last version), so a key without one has no null version
	// to replace: a new key's write reads nothing more.
	if v.IsNull() && cur != nil {
		if old, err = l.getVersion(bucket, key, NullVersionID); err != nil && !errors.Is(err, ErrVersionNotFound) {
			return err
		}
	}
	l.replVersion(batch, bucket, key, v)
	sum := summarize(v)
	setRecord(batch, versionKey(bucket, key, v.VersionID), v)
	setRecord(batch, latestKey(bucket, key), sum)
	adopt(batch, v.Segments...)
	t := tally{key: key}
	t.version(v)
	t.latest(cur, &sum)
	if old != nil {
		t.version(old)
		disown(batch, old.Segments...)
	}
	if extra != nil {
		extra(batch)
	}
	if err := l.commit(batch, bucket, &t, true); err != nil {
		return err
	}
	l.replCommitted()
	if old != nil {
		l.release(old.Segments...)
	}
	return nil
}

// latest reads the latest-version summary of a key.
func (l *Layer) latest(bucket, key string) (*latest, error) {
	raw, err := l.meta.Get(latestKey(bucket, key))
	if errors.Is(err, meta.ErrNotFound) {
		return nil, ErrObjectNotFound
	}
	if err != nil {
		return nil, err
	}
	s := &latest{}
	if err := decode(raw, s); err != nil {
		return nil, err
	}
	return s, nil
}

func (l *Layer) getVersion(bucket, key, versionID string) (*Version, error) {
	v := &Version{}
	// Decoded in place: decode copies what it keeps (the inline data too).
	err := l.meta.View(versionKey(bucket, key, versionID), func(raw []byte) error { return decode(raw, v) })
	if errors.Is(err, meta.ErrNotFound) {
		return nil, ErrVersionNotFound
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// room asks Config.Room whether size bytes of new object data may be
// written.
func (l *Layer) room(size int64) error {
	if l.cfg.Room == nil {
		return nil
	}
	return l.cfg.Room(size)
}
