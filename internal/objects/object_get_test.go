package objects

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/meta"
)

// Copying an object out (io.Copy, which uses the reader's WriteTo and so
// hands plain blob files to the writer) gives exactly the bytes Read gives,
// for every range: within a part, across parts, at the ends, inline.
func TestReadRangesThroughWriteTo(t *testing.T) {
	ctx := context.Background()
	l := newLayer(t)
	if err := l.CreateBucket(ctx, "ranges"); err != nil {
		t.Fatal(err)
	}
	up, err := l.CreateMultipartUpload(ctx, "ranges", "mp", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var whole bytes.Buffer
	var parts []CompletePart
	for i, size := range []int{5 << 20, 5 << 20, 300} {
		body := strings.Repeat(fmt.Sprintf("%c", 'a'+i), size)
		whole.WriteString(body)
		p, err := l.UploadPart(ctx, "ranges", "mp", up.UploadID, i+1, strings.NewReader(body), PutOptions{Size: int64(size)})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, CompletePart{Number: i + 1, ETag: p.Segment.ETag})
	}
	mp, err := l.CompleteMultipartUpload(ctx, "ranges", "mp", up.UploadID, parts, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	small := put(t, l, "ranges", "small", "tiny") // inline
	for _, tc := range []struct {
		key  string
		v    *Version
		want string
	}{{"mp", mp, whole.String()}, {"small", small, "tiny"}} {
		for _, rg := range [][2]int64{{0, tc.v.Size}, {0, 1}, {tc.v.Size - 1, 1}, {1, 2}, {5<<20 - 10, 20}, {5<<20 - 1, 5<<20 + 2}, {10<<20 - 1, 301}, {5, 0}} {
			off, n := rg[0], rg[1]
			if off+n > tc.v.Size {
				continue
			}
			r, err := l.OpenRangeWithKey("ranges", tc.key, tc.v, off, n, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			copied, err := io.Copy(&got, r)
			r.Close()
			if err != nil || copied != n || got.String() != tc.want[off:off+n] {
				t.Errorf("%s range %d+%d: copied %d, %v, match %v", tc.key, off, n, copied, err, got.String() == tc.want[off:off+n])
			}
		}
	}
}

// bytesPerRun is the bytes allocated by one call of fn, on average over
// runs calls.
func bytesPerRun(runs int, fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		fn()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}

// countWriter counts what it is given and keeps none of it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// An inline object is written out from its record as it is: copying it
// (after a Read of its start, or from a range within it) gives the right
// bytes and allocates no buffer of its size.
func TestInlineWriteToCopiesNothing(t *testing.T) {
	ctx := context.Background()
	l := newLayerInline(t, 64<<10)
	if err := l.CreateBucket(ctx, "inline"); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("0123456789abcdef", 1024) // 16 KiB
	v := put(t, l, "inline", "k", body)
	if len(v.Segments) != 1 || v.Segments[0].BlobID != "" {
		t.Fatalf("segments %+v: want one inline", v.Segments)
	}

	r, err := l.OpenRange("inline", "k", v, 3, v.Size-3)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 100)
	if _, err := io.ReadFull(r, head); err != nil {
		t.Fatal(err)
	}
	var rest bytes.Buffer
	if _, err := io.Copy(&rest, r); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if got := string(head) + rest.String(); got != body[3:] {
		t.Fatalf("read %d bytes, match %v", len(got), got == body[3:])
	}

	per := bytesPerRun(50, func() {
		r, err := l.OpenRange("inline", "k", v, 0, v.Size)
		if err != nil {
			t.Fatal(err)
		}
		var w countWriter
		if _, err := io.Copy(&w, r); err != nil || w.n != v.Size {
			t.Fatalf("copied %d of %d: %v", w.n, v.Size, err)
		}
		r.Close()
	})
	if per >= 4<<10 {
		t.Errorf("a copy of a 16 KiB inline object allocated %d bytes: its data was copied through a buffer", per)
	}
}

// keepLastBatch is a meta.Batch that keeps a copy of the last value set.
type keepLastBatch struct {
	meta.Batch
	last []byte
}

func (b *keepLastBatch) Set(k, v []byte) { b.last = append(b.last[:0], v...) }

// A version's record, its inline data with it, is encoded for a batch in
// a buffer shared between writes, not in one of its own.
func TestSetRecordSharesItsBuffer(t *testing.T) {
	v := &Version{VersionID: newVersionID(), Size: 16 << 10, ETag: "e",
		Segments: []Segment{{Size: 16 << 10, Inline: bytes.Repeat([]byte("x"), 16<<10)}}}
	var b keepLastBatch
	setRecord(&b, []byte("k"), v)
	if !bytes.Equal(b.last, encode(v)) {
		t.Fatalf("setRecord wrote %d bytes, not the %d of the record's encoding", len(b.last), len(encode(v)))
	}
	if raceEnabled {
		t.Skip("the race detector drops pooled buffers at random")
	}
	if per := bytesPerRun(50, func() { setRecord(&b, []byte("k"), v) }); per >= 4<<10 {
		t.Errorf("a record with 16 KiB inline allocated %d bytes to encode", per)
	}
}

// What a peer is sent of a version: an inline version's own data, with no
// copy; a blob's data read whole.
func TestReplicationBytes(t *testing.T) {
	ctx := context.Background()
	l := newLayer(t) // inline up to 8 bytes
	if err := l.CreateBucket(ctx, "rbytes"); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"tiny", "0123456789abcdef"} {
		pv := put(t, l, "rbytes", body, body)
		v, err := l.Version(ctx, "rbytes", body, pv.VersionID)
		if err != nil {
			t.Fatal(err)
		}
		data, err := l.ReplicationBytes("rbytes", body, v)
		if err != nil || string(data) != body {
			t.Fatalf("%s: got %q, %v", body, data, err)
		}
		if inline := v.Segments[0].Inline; len(inline) > 0 && &data[0] != &inline[0] {
			t.Errorf("%s: the inline data was copied", body)
		}
	}
}
