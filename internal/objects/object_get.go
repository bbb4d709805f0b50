package objects

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/meta"
)

// HeadObject returns the version's record. Without versionID it returns the
// latest version; a latest delete marker yields the marker and
// ErrObjectNotFound. A versionID naming a delete marker yields the marker and
// ErrMethodNotAllowed.
func (l *Layer) HeadObject(ctx context.Context, bucket, key, versionID string) (*Version, error) {
	v, err := l.headObject(ctx, bucket, key, versionID)
	if v != nil {
		if ferr := l.foldStatus(bucket, key, v); ferr != nil {
			return nil, ferr
		}
	}
	return v, err
}

func (l *Layer) headObject(ctx context.Context, bucket, key, versionID string) (*Version, error) {
	if _, err := l.Bucket(ctx, bucket); err != nil {
		return nil, err
	}
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	if versionID != "" {
		if !validVersionID(versionID) {
			return nil, ErrInvalidVersionID
		}
		v, err := l.getVersion(bucket, key, versionID)
		if err != nil {
			return nil, err
		}
		if v.DeleteMarker {
			return v, ErrMethodNotAllowed
		}
		return v, nil
	}
	cur, err := l.latest(bucket, key)
	if err != nil {
		return nil, err
	}
	v, err := l.getVersion(bucket, key, cur.VersionID)
	if errors.Is(err, ErrVersionNotFound) {
		return nil, ErrObjectNotFound
	}
	if err != nil {
		return nil, err
	}
	if v.DeleteMarker {
		return v, ErrObjectNotFound
	}
	return v, nil
}

// GetObject returns the version and a reader of plaintext bytes
// [off, off+length) of it. The caller must Close the reader. Errors are as
// for HeadObject.
func (l *Layer) GetObject(ctx context.Context, bucket, key, versionID string, off, length int64) (*Version, io.ReadCloser, error) {
	v, err := l.HeadObject(ctx, bucket, key, versionID)
	if err != nil {
		return v, nil, err
	}
	r, err := l.OpenRange(bucket, key, v, off, length)
	return v, r, err
}

// OpenRange returns a reader of plaintext bytes [off, off+length) of a
// version obtained from HeadObject. The caller must Close it. An SSE-C
// version cannot be opened this way (ErrCustomerKeyRequired).
func (l *Layer) OpenRange(bucket, key string, v *Version, off, length int64) (io.ReadCloser, error) {
	return l.OpenRangeWithKey(bucket, key, v, off, length, nil)
}

// OpenRangeWithKey is OpenRange for a request that sent an SSE-C key
// (customerKey nil for none); the key must be the version's.
func (l *Layer) OpenRangeWithKey(bucket, key string, v *Version, off, length int64, customerKey []byte) (io.ReadCloser, error) {
	if err := CheckCustomerKey(v, customerKey); err != nil {
		return nil, err
	}
	if off < 0 || length < 0 || off+length > v.Size {
		return nil, ErrInvalidRange
	}
	r := &segmentReader{l: l, c: l.cfg.Cipher, aad: sseAAD(bucket, key), segs: v.Segments, off: off, remain: length}
	if customerKey != nil {
		enc, err := l.encryptionFor(bucket, key, "", customerKey)
		if err != nil {
			return nil, err
		}
		r.c, r.aad = enc.c, enc.aad
	}
	if r.remain > 0 {
		// Open the first segment now, so that data that cannot be read
		// (a blob lost, too few sound shards) is an error the caller
		// answers before sending any of the body.
		if err := r.next(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// CheckCustomerKey reports whether a request's SSE-C key (nil for none)
// opens v: ErrCustomerKeyRequired, ErrCustomerKeyMismatch or
// ErrCustomerKeyNotApplicable otherwise.
func CheckCustomerKey(v *Version, customerKey []byte) error {
	return checkCustomerKey(v.KeyCheck, customerKey)
}

// segmentReader streams a byte range across an object's segments, opening
// each blob only when the range reaches it.
type segmentReader struct {
	l      *Layer
	c      Cipher // opens sealed segments
	aad    []byte
	segs   []Segment
	off    int64 // offset into the current first segment
	remain int64
	cur    io.Reader
	file   blob.File
	// run is the part of a blob cur reads, for sendByReference.
	run *Run
}

func (r *segmentReader) Read(p []byte) (int, error) {
	for {
		if r.remain == 0 {
			return 0, io.EOF
		}
		if r.cur == nil {
			if err := r.next(); err != nil {
				return 0, err
			}
		}
		if int64(len(p)) > r.remain {
			p = p[:r.remain]
		}
		n, err := r.cur.Read(p)
		r.remain -= int64(n)
		if errors.Is(err, io.EOF) {
			r.closeFile()
			r.cur, r.run = nil, nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

// WriteTo implements io.WriterTo: a segment stored as a plain blob file is
// handed to w as a limited reader of the file itself, so that an HTTP
// response writer sends it with sendfile; plain inline data is written as
// it is, and sealed segments are copied as Read gives them.
func (r *segmentReader) WriteTo(w io.Writer) (int64, error) {
	if n, ok, err := r.sendByReference(w); ok {
		return n, err
	}
	var total int64
	var buf []byte
	for r.remain > 0 {
		if r.cur == nil {
			if err := r.next(); err != nil {
				return total, err
			}
		}
		var n int64
		var err error
		sr, plain := r.cur.(*io.SectionReader)
		var f *os.File
		if plain = plain && r.file != nil; plain {
			f, plain = blob.OSFile(r.file)
		}
		if br, inline := r.cur.(*bytes.Reader); inline {
			// Inline data: written as it is, with no buffer between.
			n, err = br.WriteTo(w)
		} else if plain {
			// A plain blob: seek the file and give it to w directly.
			_, off, size := sr.Outer()
			if _, err = f.Seek(off, io.SeekStart); err == nil {
				n, err = io.Copy(w, &io.LimitedReader{R: f, N: size})
				if err == nil && n < size {
					err = io.ErrUnexpectedEOF
				}
			}
		} else {
			if buf == nil {
				// Small objects are the common case: a buffer no larger than
				// what is left to send.
				buf = make([]byte, min(r.remain, copyBufferSize))
			}
			n, err = io.CopyBuffer(writerOnly{w}, io.LimitReader(r.cur, r.remain), buf)
		}
		total += n
		r.remain -= n
		r.closeFile()
		r.cur, r.run = nil, nil
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// copyBufferSize bounds the buffer WriteTo copies sealed and inline
// segments through.
const copyBufferSize = 64 << 10

// writerOnly hides a writer's ReadFrom, so a copy into it uses our buffer.
type writerOnly struct{ io.Writer }

// next opens the segment holding r.off.
func (r *segmentReader) next() error {
	for len(r.segs) > 0 && r.off >= r.segs[0].Size {
		r.off -= r.segs[0].Size
		r.segs = r.segs[1:]
	}
	if len(r.segs) == 0 {
		return io.ErrUnexpectedEOF
	}
	seg := r.segs[0]
	n := min(seg.Size-r.off, r.remain)
	if seg.BlobID == "" && len(seg.SealedKey) == 0 && r.off+n <= int64(len(seg.Inline)) {
		// Plain inline data: WriteTo hands it to its writer as it is.
		r.cur = bytes.NewReader(seg.Inline[r.off : r.off+n])
		r.segs = r.segs[1:]
		r.off = 0
		return nil
	}
	src, size, err := r.openSegment(seg)
	if err != nil {
		return err
	}
	if len(seg.SealedKey) == 0 {
		r.cur = io.NewSectionReader(src, r.off, n)
		if seg.BlobID != "" {
			r.run = &Run{Blob: seg.BlobID, Off: r.off, Len: n}
		}
	} else {
		dk, err := r.c.Unseal(seg.SealedKey, r.aad)
		if err != nil {
			return err
		}
		plain, err := r.c.DecryptRange(dk, src, size, r.off, n)
		if err != nil {
			return err
		}
		r.cur = plain
		if seg.BlobID != "" {
			r.cur = &countingReader{Reader: plain}
			r.run = &Run{Blob: seg.BlobID, Off: r.off, Len: n, Key: dk}
		}
	}
	r.segs = r.segs[1:]
	r.off = 0
	return nil
}

func (r *segmentReader) openSegment(seg Segment) (io.ReaderAt, int64, error) {
	if seg.BlobID == "" {
		return bytes.NewReader(seg.Inline), int64(len(seg.Inline)), nil
	}
	f, err := r.l.blobs.Open(seg.BlobID)
	if err != nil {
		return nil, 0, err
	}
	r.file = f
	return f, f.Size(), nil
}

func (r *segmentReader) closeFile() {
	if r.file != nil {
		r.file.Close()
		r.file = nil
	}
}

// Close releases any open blob.
func (r *segmentReader) Close() error {
	r.closeFile()
	return nil
}

// LiveKeys reports, for each key of bucket, whether its latest version is
// an object (not a delete marker), as HeadObject without a version ID
// finds one; the latest pointers are read in one call (meta.ViewMany), so
// on a multi-node site checking many keys costs one etcd round trip per
// 128 of them instead of three each. An invalid key is not live.
func (l *Layer) LiveKeys(ctx context.Context, bucket string, keys []string) ([]bool, error) {
	live := make([]bool, len(keys))
	if _, err := l.Bucket(ctx, bucket); err != nil {
		if errors.Is(err, ErrBucketNotFound) {
			return live, nil
		}
		return nil, err
	}
	var mk [][]byte
	var at []int
	for i, k := range keys {
		if ValidateKey(k) != nil {
			continue
		}
		mk = append(mk, latestKey(bucket, k))
		at = append(at, i)
	}
	err := meta.ViewMany(l.meta, mk, func(n int, raw []byte, found bool) error {
		if !found {
			return nil
		}
		var s latest
		if err := decode(raw, &s); err != nil {
			return err
		}
		live[at[n]] = !s.DeleteMarker
		return nil
	})
	return live, err
}
