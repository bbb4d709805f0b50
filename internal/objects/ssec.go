package objects

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
)

// SSE-C: objects encrypted with a key the client sends on every request.
// The data is stored in the SSE-S3 format (a fresh data key per segment,
// sealed under a key-encryption key and bound to the object), but the
// sealing key is derived from the client's key instead of the site key, so
// the site cannot read the object without the client. The client's key is
// never stored: a version keeps only a salted HMAC of it (KeyCheck), to
// tell a wrong key from a tampered object.

// CustomerKeySize is the length of an SSE-C key (AES-256).
const CustomerKeySize = 32

// CustomerCipher is the optional capability of a Cipher to seal data keys
// under a key the client supplies rather than the site key.
type CustomerCipher interface {
	// ForCustomerKey returns a Cipher sealing and unsealing data keys
	// under key (CustomerKeySize bytes).
	ForCustomerKey(key []byte) (Cipher, error)
}

// SSE-C errors.
var (
	// ErrCustomerKeyRequired: the object is SSE-C and the request sent no
	// key (InvalidRequest).
	ErrCustomerKeyRequired = errors.New("objects: the object is encrypted with a customer key the request did not send")
	// ErrCustomerKeyMismatch: the key sent is not the object's or the
	// upload's (InvalidArgument).
	ErrCustomerKeyMismatch = errors.New("objects: the customer key does not match the object's")
	// ErrCustomerKeyNotApplicable: a customer key sent for an object not
	// encrypted with one (InvalidRequest).
	ErrCustomerKeyNotApplicable = errors.New("objects: the object is not encrypted with a customer key")
)

const keyCheckLabel = "twinlake sse-c key check v1"

// etagLabel separates the HMAC of an SSE-C ETag (opaqueETag) from the key
// check's under the same key.
const etagLabel = "twinlake sse-c etag v1"

// newKeyCheck returns salt ‖ HMAC-SHA256(key, label ‖ salt).
func newKeyCheck(key []byte) []byte {
	salt := make([]byte, 16)
	rand.Read(salt)
	return append(salt, keyCheckMAC(key, salt)...)
}

// opaqueETag is the ETag of data written under a customer key, as S3's
// is opaque for SSE-C: the MD5 of the plaintext would let anyone who can
// list the bucket confirm a guess of an object's content without its key.
// It is an HMAC of that MD5 under the customer key, so the same data sent
// again under the same key (a part re-sent, a retried PUT) has the same
// ETag, and nobody without the key can tie it to a content.
func opaqueETag(customerKey []byte, md5Hex string) string {
	m := hmac.New(sha256.New, customerKey)
	m.Write([]byte(etagLabel))
	m.Write([]byte(md5Hex))
	return hex.EncodeToString(m.Sum(nil)[:16]) // an MD5's length, as clients expect
}

func keyCheckMAC(key, salt []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(keyCheckLabel))
	m.Write(salt)
	return m.Sum(nil)
}

// checkCustomerKey matches the key a request sent against what a version
// or upload was written with (check nil: no customer key).
func checkCustomerKey(check, key []byte) error {
	switch {
	case len(check) == 0 && key == nil:
		return nil
	case len(check) == 0:
		return ErrCustomerKeyNotApplicable
	case key == nil:
		return ErrCustomerKeyRequired
	case len(check) != 16+sha256.Size || !hmac.Equal(check[16:], keyCheckMAC(key, check[:16])):
		return ErrCustomerKeyMismatch
	}
	return nil
}

// ssecAAD binds an SSE-C segment's data key to its object.
func ssecAAD(bucket, key string) []byte {
	return []byte("twinlake-ssec\x00" + bucket + "\x00" + key)
}

// encryption is how one write's segments are encrypted: nil for none.
type encryption struct {
	c   Cipher
	aad []byte
	// customerKey is the client's key (SSE-C), nil for none; the ETag
	// then says nothing of the plaintext (opaqueETag).
	customerKey []byte
}

// encryptionFor picks the cipher of a write: the client's key (SSE-C),
// else the site key when sse is set, else none.
func (l *Layer) encryptionFor(bucket, key, sse string, customerKey []byte) (*encryption, error) {
	if customerKey != nil {
		cc, ok := l.cfg.Cipher.(CustomerCipher)
		if !ok {
			return nil, ErrSSEUnavailable
		}
		if len(customerKey) != CustomerKeySize {
			return nil, fmt.Errorf("%w: customer key of %d bytes", ErrInvalidArgument, len(customerKey))
		}
		c, err := cc.ForCustomerKey(customerKey)
		if err != nil {
			return nil, err
		}
		return &encryption{c: c, aad: ssecAAD(bucket, key), customerKey: customerKey}, nil
	}
	if sse != "" {
		return &encryption{c: l.cfg.Cipher, aad: sseAAD(bucket, key)}, nil
	}
	return nil, nil
}

// ReplicationBytes returns what a peer is sent of a version's data (see
// ReplicationData), whole. The data of a version kept inline in one
// segment (plaintext, or an SSE-C version's stored ciphertext) is v's own
// slice, not a copy: the caller must not change it.
func (l *Layer) ReplicationBytes(bucket, key string, v *Version) ([]byte, error) {
	if len(v.Segments) == 1 {
		seg := v.Segments[0]
		if seg.BlobID == "" && (len(v.KeyCheck) > 0 || len(seg.SealedKey) == 0 && int64(len(seg.Inline)) == v.Size) {
			return seg.Inline, nil
		}
	}
	rc, size, err := l.ReplicationData(bucket, key, v)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return ReadSized(rc, size)
}

// replicationReaders bounds how many versions' data ReplicationBytesOf
// reads at once.
const replicationReaders = 16

// ReplicationBytesOf is ReplicationBytes of several versions: vs[i] is
// of[i]'s version (nil: none to read); a delete marker or an empty object
// has no data. The versions whose data is in blobs are read several at
// once, as storeReplicas writes them: on a site whose data is coded
// across nodes each read is a round trip. errs[i] is of[i]'s read error.
func (l *Layer) ReplicationBytesOf(of []VersionOf, vs []*Version) (data [][]byte, errs []error) {
	data, errs = make([][]byte, len(of)), make([]error, len(of))
	sem := make(chan struct{}, replicationReaders)
	var wg sync.WaitGroup
	for i, v := range vs {
		if v == nil || v.DeleteMarker || v.Size == 0 && len(v.KeyCheck) == 0 {
			continue
		}
		if len(v.Segments) == 1 && v.Segments[0].BlobID == "" {
			data[i], errs[i] = l.ReplicationBytes(of[i].Bucket, of[i].Key, v) // inline: no read
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			data[i], errs[i] = l.ReplicationBytes(of[i].Bucket, of[i].Key, v)
		})
	}
	wg.Wait()
	return data, errs
}

// ReplicationData returns what a peer is sent of a version's data, and its
// length: the plaintext, or for an SSE-C version (which this site cannot
// decrypt) the stored ciphertext of each segment in order, which the peer
// stores as is under the same sealed keys (storeReplicaData), so that the
// replica opens with the client's key just as the original does.
func (l *Layer) ReplicationData(bucket, key string, v *Version) (io.ReadCloser, int64, error) {
	if len(v.KeyCheck) == 0 {
		r, err := l.OpenRange(bucket, key, v, 0, v.Size)
		return r, v.Size, err
	}
	var readers []io.Reader
	var closers []io.Closer
	var size int64
	closeAll := func() {
		for _, c := range closers {
			c.Close()
		}
	}
	for _, seg := range v.Segments {
		if seg.BlobID == "" {
			readers = append(readers, bytes.NewReader(seg.Inline))
			size += int64(len(seg.Inline))
			continue
		}
		f, err := l.blobs.Open(seg.BlobID)
		if err != nil {
			closeAll()
			return nil, 0, err
		}
		closers = append(closers, f)
		readers = append(readers, f)
		size += f.Size()
	}
	return &multiReadCloser{Reader: io.MultiReader(readers...), close: closeAll}, size, nil
}

type multiReadCloser struct {
	io.Reader
	close func()
}

func (m *multiReadCloser) Close() error {
	m.close()
	return nil
}

// storeCustomerReplica stores an SSE-C version's ciphertext as received:
// each segment's stored bytes (their length follows from the plaintext
// size and the stream format) with the sender's sealed key. Without the
// client's key nothing here can check them; the stream's authentication
// does, on every read.
func (l *Layer) storeCustomerReplica(bucket, key string, in *Version, body io.Reader) ([]Segment, error) {
	if l.cfg.Cipher == nil {
		return nil, ErrSSEUnavailable
	}
	var segs []Segment
	for i, s := range in.Segments {
		if len(s.SealedKey) == 0 {
			l.release(segs...)
			return nil, fmt.Errorf("%w: SSE-C segment %d without its sealed key", ErrInvalidArgument, i)
		}
		n := l.cfg.Cipher.EncryptedSize(s.Size)
		st, err := l.store(bucket, key, io.LimitReader(body, n), n, nil, "")
		if err != nil {
			l.release(segs...)
			return nil, err
		}
		st.seg.Size, st.seg.SealedKey = s.Size, s.SealedKey
		st.seg.Number, st.seg.ETag, st.seg.Checksum = s.Number, s.ETag, s.Checksum
		segs = append(segs, st.seg)
	}
	if _, err := io.ReadFull(body, make([]byte, 1)); err == nil {
		l.release(segs...)
		return nil, fmt.Errorf("%w: SSE-C data longer than its segments", ErrInvalidArgument)
	}
	return segs, nil
}
