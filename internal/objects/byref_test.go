package objects

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/twinlake/twinlake/internal/httprec"
)

// runSink is a response writer that takes a body as runs of blobs, under
// a recorder as the S3 API's would be.
type runSink struct {
	http.ResponseWriter
	runs []Run
	took bool
}

func (s *runSink) WriteRuns(runs []Run) (bool, error) {
	if !s.took {
		return false, nil
	}
	s.runs = append(s.runs, runs...)
	return true, nil
}

func (s *runSink) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// TestBodyByReference: a range of plain blob data of at least 1 MiB goes
// to a RunWriter below the response writers as the runs of blobs it is
// made of, across an upload's parts, and the recorders above it count its
// bytes; the runs read back as the range. So does an encrypted object's,
// each run with its data key, and the rest of a range partly read. Smaller
// ranges, inline data and a writer that declines are sent as bytes.
func TestBodyByReference(t *testing.T) {
	l := newLayer(t)
	ctx := context.Background()
	if err := l.CreateBucket(ctx, "byref"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 7<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	u, err := l.CreateMultipartUpload(ctx, "byref", "mp", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var list []CompletePart
	for i, part := range [][]byte{data[:5<<20], data[5<<20:]} {
		p, err := l.UploadPart(ctx, "byref", "mp", u.UploadID, i+1, bytes.NewReader(part), PutOptions{Size: int64(len(part))})
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, CompletePart{Number: i + 1, ETag: p.Segment.ETag})
	}
	mp, err := l.CompleteMultipartUpload(ctx, "byref", "mp", u.UploadID, list, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	small := put(t, l, "byref", "small", string(data[:100<<10]))
	tiny := put(t, l, "byref", "tiny", "abc") // inline
	l.cfg.Cipher = ctrCipher{}
	sealed, err := l.PutObject(ctx, "byref", "sealed", bytes.NewReader(data[:3<<20]), PutOptions{Size: 3 << 20, SSE: SSEAlgorithm})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name        string
		v           *Version
		off, length int64
		took        bool // the sink takes runs
		byRef       bool // want the body sent by reference
		skip        int64
	}{
		{"encrypted", sealed, 0, 3 << 20, true, true, 0},
		{"encrypted range", sealed, 1<<20 + 7, 1<<20 + 3, true, true, 0},
		{"encrypted, partly read", sealed, 100, 2 << 20, true, true, 1000},
		{"partly read", mp, 100, 6 << 20, true, true, 1000},
		{"whole upload", mp, 0, 7 << 20, true, true, 0},
		{"across the parts", mp, 4 << 20, 2 << 20, true, true, 0},
		{"within the second part", mp, 5<<20 + 100, 1 << 20, true, true, 0},
		{"under 1 MiB", mp, 4 << 20, 1<<20 - 1, true, false, 0},
		{"a small object", small, 0, 100 << 10, true, false, 0},
		{"inline", tiny, 0, 3, true, false, 0},
		{"declined", mp, 0, 7 << 20, false, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := l.OpenRange("byref", "", tc.v, tc.off, tc.length)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			body := httptest.NewRecorder()
			sink := &runSink{ResponseWriter: body, took: tc.took}
			rec := &httprec.Recorder{ResponseWriter: sink}
			head := make([]byte, tc.skip)
			if _, err := io.ReadFull(r, head); err != nil {
				t.Fatal(err)
			}
			rec.Write(head)
			n, err := io.Copy(rec, r)
			if n += tc.skip; err != nil || n != tc.length || rec.Bytes != tc.length {
				t.Fatalf("copied %d (recorded %d), %v; want %d", n, rec.Bytes, err, tc.length)
			}
			if (len(sink.runs) > 0) != tc.byRef {
				t.Fatalf("runs %v, want by reference %t", sink.runs, tc.byRef)
			}
			want := data[tc.off : tc.off+tc.length]
			if tc.v == tiny {
				want = []byte("abc")
			}
			got := body.Body.Bytes()
			if tc.byRef {
				if int64(len(got)) != tc.skip {
					t.Fatalf("%d bytes sent as well as the runs", int64(len(got))-tc.skip)
				}
				got = append(got, readRuns(t, l, sink.runs)...)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("the body (%d bytes) is not the range (%d bytes)", len(got), len(want))
			}
		})
	}
}

// readRuns reads runs back from l's blobs.
func readRuns(t *testing.T, l *Layer, runs []Run) []byte {
	t.Helper()
	var out []byte
	for _, run := range runs {
		f, err := l.blobs.Open(run.Blob)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, run.Len)
		if run.Key == nil {
			_, err = f.ReadAt(b, run.Off)
		} else {
			var plain io.Reader
			if plain, err = l.cfg.Cipher.DecryptRange(run.Key, f, f.Size(), run.Off, run.Len); err == nil {
				_, err = io.ReadFull(plain, b)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		out = append(out, b...)
	}
	return out
}
