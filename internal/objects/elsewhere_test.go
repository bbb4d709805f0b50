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
	intent    bool                                  // the blobs' intents were durable when asked
	plainOne  bool                                  // it writes only a whole body, plain (an older node)
	l         *Layer
}

func (e *elsewhere) CanStore(blobs int, encrypted bool) bool {
	return !e.plainOne || blobs == 1 && !encrypted
}

func (e *elsewhere) StoreAs(blobs []ElsewhereBlob, algs []checksum.Algorithm) ([]StoredElsewhere, error) {
	rest := e.data
	var out []StoredElsewhere
	e.intent = true
	for _, b := range blobs {
		e.ids = append(e.ids, b.ID)
		e.intent = e.intent && e.l.intentExists(b.ID)
		part := rest
		if b.Size >= 0 {
			part = rest[:min(b.Size, int64(len(rest)))]
		}
		rest = rest[len(part):]
		w, err := e.blobs.CreateAs(b.ID)
		if err != nil {
			return nil, err
		}
		hs, _ := checksum.NewSet(algs...)
		var data io.Reader = bytes.NewReader(part)
		if b.DataKey != nil {
			if data, err = e.l.cfg.Cipher.Encrypt(b.DataKey, data); err != nil {
				return nil, err
			}
		}
		io.Copy(w, data)
		hs.Write(part)
		if _, err := w.Commit(); err != nil {
			return nil, err
		}
		md5Hex, sums := hs.Sum()
		st := StoredElsewhere{Size: hs.Size(), MD5: md5Hex, Sums: sums}
		if e.answer != nil {
			st = e.answer(st)
		}
		out = append(out, st)
	}
	if e.fail != nil {
		return nil, e.fail
	}
	return out, nil
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
	if got := read(t, l, "bkt", "k", ""); got != string(data) {
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
	if got := read(t, l, "bkt", "sealed", ""); got != string(data) {
		t.Fatalf("an encrypted object stored elsewhere reads back %d bytes, not what was sent", len(got))
	}

	// A node that writes only whole bodies, plain (an older build): an
	// encrypted one is read here.
	older := body()
	older.plainOne = true
	if _, err := l.PutObject(ctx, "bkt", "sealed-older", older, PutOptions{Size: int64(len(data)), SSE: SSEAlgorithm}); err != nil || len(older.ids) != 0 {
		t.Fatalf("an encrypted object stored by a node that cannot (%v): %v", older.ids, err)
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

// TestReplicaInPartsStoredElsewhere: a peer's version in parts whose body
// a node offered to write is written there, each part to a blob of its
// own under a durable intent, encrypted when the version is; a part whose
// digest is not its ETag leaves neither the version nor any blob; a node
// that writes only whole bodies has the body read here.
func TestReplicaInPartsStoredElsewhere(t *testing.T) {
	l := newLayerInline(t, 8)
	l.cfg.Cipher = ctrCipher{}
	ctx := context.Background()
	if err := l.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	first := bytes.Repeat([]byte("first part "), 30)
	second := strings.Repeat("second part ", 20)
	whole := append(bytes.Clone(first), second...)
	for _, tc := range []struct {
		name      string
		sse       string
		plainOne  bool
		badDigest bool
		wantIDs   int
	}{
		{name: "plain", wantIDs: 2},
		{name: "encrypted", sse: SSEAlgorithm, wantIDs: 2},
		{name: "bad digest", badDigest: true, wantIDs: 2},
		{name: "older node", sse: SSEAlgorithm, plainOne: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "r-" + strings.ReplaceAll(tc.name, " ", "-")
			in := replicaOf(second, first)
			in.SSE = tc.sse
			if tc.badDigest {
				in.Segments[1].ETag = strings.Repeat("0", 32)
			}
			e := &elsewhere{Reader: bytes.NewReader(whole), blobs: l.blobs, data: whole, plainOne: tc.plainOne, l: l}
			_, err := l.ApplyReplica(ctx, "bkt", key, in, e)
			if len(e.ids) != tc.wantIDs || tc.wantIDs > 0 && !e.intent {
				t.Fatalf("blobs written elsewhere %v (intents durable: %t), want %d", e.ids, e.intent, tc.wantIDs)
			}
			if tc.badDigest {
				if !errors.Is(err, ErrBadDigest) {
					t.Fatalf("a part that is not its ETag: %v", err)
				}
				for _, id := range e.ids {
					if _, err := l.blobs.Open(id); !errors.Is(err, blob.ErrNotFound) || l.intentExists(id) {
						t.Errorf("blob %s (or its intent) left: %v", id, err)
					}
				}
				if _, _, err := l.GetObject(ctx, "bkt", key, "", 0, 1); !errors.Is(err, ErrObjectNotFound) {
					t.Fatalf("the key reads %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v, rc, err := l.GetObject(ctx, "bkt", key, "", 0, int64(len(whole)))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(rc)
			rc.Close()
			if !bytes.Equal(got, whole) || len(v.Segments) != 2 || (tc.sse != "") != (len(v.Segments[0].SealedKey) > 0) {
				t.Fatalf("read back %d bytes (want %d), segments %+v", len(got), len(whole), v.Segments)
			}
			for i, id := range e.ids {
				if v.Segments[i].BlobID != id {
					t.Fatalf("segment %d is in blob %s, not %s as written", i, v.Segments[i].BlobID, id)
				}
			}
		})
	}
}
