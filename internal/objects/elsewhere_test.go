package objects

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/checksum"
)

// elsewhere is an ElsewhereBody that writes data to the layer's blob store
// itself, as a node of the site would, and answers what it is told to.
type elsewhere struct {
	io.Reader // read only when the offer is declined
	blobs     *blob.Store
	data      []byte
	answer    func(StoredElsewhere) StoredElsewhere // alters the answer
	fail      error                                 // after writing
	ids       []string                              // the blobs asked for
	intent    bool                                  // the blob's intent was durable when asked
	l         *Layer
}

func (e *elsewhere) StoreAs(id string, algs []checksum.Algorithm, dataKey []byte) (StoredElsewhere, error) {
	e.ids = append(e.ids, id)
	e.intent = e.l.intentExists(id)
	w, err := e.blobs.CreateAs(id)
	if err != nil {
		return StoredElsewhere{}, err
	}
	hs, _ := checksum.NewSet(algs...)
	var data io.Reader = bytes.NewReader(e.data)
	if dataKey != nil {
		if data, err = e.l.cfg.Cipher.Encrypt(dataKey, data); err != nil {
			return StoredElsewhere{}, err
		}
	}
	io.Copy(w, data)
	hs.Write(e.data)
	if _, err := w.Commit(); err != nil {
		return StoredElsewhere{}, err
	}
	if e.fail != nil {
		return StoredElsewhere{}, e.fail
	}
	md5Hex, sums := hs.Sum()
	st := StoredElsewhere{Size: hs.Size(), MD5: md5Hex, Sums: sums}
	if e.answer != nil {
		st = e.answer(st)
	}
	return st, nil
}

// TestStoreElsewhere: a body written elsewhere is committed as one written
// here, under a durable intent while it is written; a failure, an answer
// that lacks a digest or a size that is not the declared one leaves
// neither the object nor its blob; an encrypted object is written there
// encrypted; an inline object is read here instead.
func TestStoreElsewhere(t *testing.T) {
	l := newLayerInline(t, 8)
	l.cfg.Cipher = ctrCipher{}
	ctx := context.Background()
	if err := l.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("elsewhere "), 1000)
	sum := md5.Sum(data)
	body := func() *elsewhere {
		return &elsewhere{Reader: bytes.NewReader(data), blobs: l.blobs, data: data, l: l}
	}

	e := body()
	v, err := l.PutObject(ctx, "bkt", "k", e, PutOptions{Size: int64(len(data)), Checksum: checksum.CRC32})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.ids) != 1 || !e.intent || v.ETag != hex.EncodeToString(sum[:]) || v.Checksums["CRC32"] == "" || v.Segments[0].BlobID != e.ids[0] {
		t.Fatalf("stored elsewhere: blobs %v (intent %t), version %+v", e.ids, e.intent, v)
	}
	if l.intentExists(e.ids[0]) {
		t.Fatal("the intent outlived the commit")
	}
	_, rc, err := l.GetObject(ctx, "bkt", "k", "", 0, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes", len(got))
	}

	for name, e := range map[string]*elsewhere{
		"failed":      {fail: errors.New("client gone")},
		"no md5":      {answer: func(s StoredElsewhere) StoredElsewhere { s.MD5 = ""; return s }},
		"no checksum": {answer: func(s StoredElsewhere) StoredElsewhere { s.Sums = nil; return s }},
		"short":       {answer: func(s StoredElsewhere) StoredElsewhere { s.Size--; return s }},
	} {
		e.Reader, e.blobs, e.data, e.l = bytes.NewReader(data), l.blobs, data, l
		key := "bad-" + strings.ReplaceAll(name, " ", "-")
		_, err := l.PutObject(ctx, "bkt", key, e, PutOptions{Size: int64(len(data)), Checksum: checksum.CRC32})
		if err == nil || name == "short" && !errors.Is(err, ErrIncompleteBody) {
			t.Errorf("%s: stored, or refused as %v", name, err)
		}
		if _, _, err := l.GetObject(ctx, "bkt", key, "", 0, 1); !errors.Is(err, ErrObjectNotFound) {
			t.Errorf("%s: the key reads %v", name, err)
		}
		if _, err := l.blobs.Open(e.ids[0]); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("%s: its blob is left: %v", name, err)
		}
		if l.intentExists(e.ids[0]) {
			t.Errorf("%s: its intent is left", name)
		}
	}

	// Encrypted: the data key goes with the call, the blob holds the
	// ciphertext, the object reads back plain.
	sealed := body()
	v, err = l.PutObject(ctx, "bkt", "sealed", sealed, PutOptions{Size: int64(len(data)), SSE: SSEAlgorithm})
	if err != nil || len(sealed.ids) != 1 || len(v.Segments[0].SealedKey) == 0 || v.ETag != hex.EncodeToString(sum[:]) {
		t.Fatalf("an encrypted object stored elsewhere (%v): %+v, %v", sealed.ids, v, err)
	}
	br, err := l.blobs.Open(sealed.ids[0])
	if err != nil {
		t.Fatal(err)
	}
	at := make([]byte, len(data))
	n, _ := br.ReadAt(at, 0)
	br.Close()
	if n != len(data) || bytes.Equal(at, data) {
		t.Fatalf("the blob of an encrypted object holds %d bytes, plain: %t", n, bytes.Equal(at, data))
	}
	_, rc, err = l.GetObject(ctx, "bkt", "sealed", "", 0, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, data) {
		t.Fatalf("an encrypted object stored elsewhere reads back %d bytes, not what was sent", len(got))
	}

	// Data small enough to keep inline is read here.
	small := body()
	small.Reader = strings.NewReader("tiny")
	if _, err := l.PutObject(ctx, "bkt", "small", small, PutOptions{Size: 4}); err != nil || len(small.ids) != 0 {
		t.Fatalf("an inline object stored elsewhere (%v): %v", small.ids, err)
	}
}

// ctrCipher is a Cipher for tests: AES-CTR under the data key, which is
// its own sealed form.
type ctrCipher struct{}

func (ctrCipher) NewKey([]byte) ([]byte, []byte, error) {
	k := make([]byte, 32)
	rand.Read(k)
	return k, k, nil
}

func (ctrCipher) Unseal(sealed, _ []byte) ([]byte, error) { return sealed, nil }

func (ctrCipher) Encrypt(key []byte, plaintext io.Reader) (io.Reader, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.StreamReader{S: cipher.NewCTR(block, make([]byte, aes.BlockSize)), R: plaintext}, nil
}

func (ctrCipher) EncryptedSize(n int64) int64 { return n }

func (c ctrCipher) DecryptRange(key []byte, ct io.ReaderAt, encSize, off, n int64) (io.Reader, error) {
	plain, err := c.Encrypt(key, io.NewSectionReader(ct, 0, encSize))
	if err != nil {
		return nil, err
	}
	if _, err := io.CopyN(io.Discard, plain, off); err != nil {
		return nil, err
	}
	return io.LimitReader(plain, n), nil
}
