package objects

import (
	"bytes"
	"context"
	"crypto/md5"
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

func (e *elsewhere) StoreAs(id string, algs []checksum.Algorithm) (StoredElsewhere, error) {
	e.ids = append(e.ids, id)
	e.intent = e.l.intentExists(id)
	w, err := e.blobs.CreateAs(id)
	if err != nil {
		return StoredElsewhere{}, err
	}
	hs, _ := checksum.NewSet(algs...)
	w.Write(e.data)
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
// neither the object nor its blob; an encrypted or inline object is read
// here instead.
func TestStoreElsewhere(t *testing.T) {
	l := newLayerInline(t, 8)
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

	// Data small enough to keep inline is read here (encrypted data, in
	// the cluster tests of internal/cli).
	small := body()
	small.Reader = strings.NewReader("tiny")
	if _, err := l.PutObject(ctx, "bkt", "small", small, PutOptions{Size: 4}); err != nil || len(small.ids) != 0 {
		t.Fatalf("an inline object stored elsewhere (%v): %v", small.ids, err)
	}
}
