package objects

import (
	"io"
	"net/http"
)

// A body sent by reference. On a multi-node site a node that is not the
// leader passes each request to the leader; for a GET it can read the
// object's data from the drives itself, as well as the leader can, instead
// of having the leader read it and send it on. The leader still decides
// everything else (who may read, which version, which range, the headers);
// a response writer that can send the data by reference (a RunWriter, in
// the chain of writers that wrap one another) then gets the runs of blobs
// the body is made of in place of their bytes.

// Run is a byte range of a stored blob: part of a response's body.
type Run struct {
	Blob string `json:"blob"`
	Off  int64  `json:"off"`
	Len  int64  `json:"len"`
	// Key, for a blob encrypted at rest, is its data key, unsealed: the
	// range is then of its plaintext, which the layer's
	// Cipher.DecryptRange reads. A RunWriter never sends it in the
	// clear.
	Key []byte `json:"key,omitempty"`
}

// RunWriter is a response writer that can send a body as the runs of
// blobs it is made of.
type RunWriter interface {
	// WriteRuns sends runs as the rest of the body, or reports false
	// (having sent nothing) when it cannot, for the caller to send the
	// bytes.
	WriteRuns(runs []Run) (bool, error)
}

// ByteCounter is a response writer that counts the body bytes sent
// through it, and is told of those sent by reference below it.
type ByteCounter interface {
	CountBytes(n int64)
}

// byRefMin is the least body sent by reference: a smaller one costs the
// leader little to send on, and its data (a shard read whole when opened)
// would be read twice.
const byRefMin = 1 << 20

// runs returns the rest of r's range as runs of blobs, or false when some
// of it is not blob data (inline: sent as bytes) or it is smaller than
// byRefMin.
func (r *segmentReader) runs() ([]Run, bool) {
	if r.remain < byRefMin {
		return nil, false
	}
	var out []Run
	remain := r.remain
	if r.cur != nil {
		// The first segment, opened by OpenRange: as much of it as
		// its reader has not read.
		if r.run == nil {
			return nil, false
		}
		var pos int64
		switch cur := r.cur.(type) {
		case *io.SectionReader:
			var err error
			if pos, err = cur.Seek(0, io.SeekCurrent); err != nil {
				return nil, false
			}
		case *countingReader:
			pos = cur.n
		default:
			return nil, false
		}
		first := Run{Blob: r.run.Blob, Off: r.run.Off + pos, Len: r.run.Len - pos, Key: r.run.Key}
		out = append(out, first)
		remain -= first.Len
	}
	off := r.off
	for _, seg := range r.segs {
		if remain == 0 {
			break
		}
		if off >= seg.Size {
			off -= seg.Size
			continue
		}
		if seg.BlobID == "" {
			return nil, false
		}
		var dk []byte
		if len(seg.SealedKey) > 0 {
			var err error
			if dk, err = r.c.Unseal(seg.SealedKey, r.aad); err != nil {
				return nil, false // the bytes, then, fail as they would
			}
		}
		n := min(seg.Size-off, remain)
		out = append(out, Run{Blob: seg.BlobID, Off: off, Len: n, Key: dk})
		off, remain = 0, remain-n
	}
	return out, remain == 0
}

// sendByReference hands the rest of r's range to a RunWriter below w, and
// reports whether it took it; the ByteCounters between w and it count the
// bytes as sent.
func (r *segmentReader) sendByReference(w io.Writer) (int64, bool, error) {
	var counters []ByteCounter
	for w != nil {
		if rw, ok := w.(RunWriter); ok {
			runs, ok := r.runs()
			if !ok {
				return 0, false, nil
			}
			took, err := rw.WriteRuns(runs)
			if !took {
				return 0, false, err
			}
			n := r.remain
			for _, c := range counters {
				c.CountBytes(n)
			}
			r.remain = 0
			r.closeFile()
			r.cur, r.run = nil, nil
			return n, true, err
		}
		if c, ok := w.(ByteCounter); ok {
			counters = append(counters, c)
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return 0, false, nil
		}
		w = u.Unwrap()
	}
	return 0, false, nil
}

// countingReader counts what is read through it: how far into a sealed
// segment's range its decrypting reader is.
type countingReader struct {
	io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.Reader.Read(p)
	c.n += int64(n)
	return n, err
}
