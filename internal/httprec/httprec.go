// Package httprec records what a handler wrote to an http.ResponseWriter:
// the status and the body bytes, for the traces and metrics of every HTTP
// surface.
package httprec

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
)

// Recorder wraps a ResponseWriter. The first status written is kept (a
// later WriteHeader is ignored); a Write without one records 200.
type Recorder struct {
	http.ResponseWriter
	// Status is the status written, or 0 while none is.
	Status int
	// Bytes counts the body bytes written.
	Bytes int64
}

// WriteHeader implements http.ResponseWriter.
func (r *Recorder) WriteHeader(code int) {
	if r.Status != 0 {
		return
	}
	r.Status = code
	r.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (r *Recorder) Write(p []byte) (int, error) {
	if r.Status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	n, err := r.ResponseWriter.Write(p)
	r.Bytes += int64(n)
	return n, err
}

// ReadFrom implements io.ReaderFrom, so that a body copied from a file
// (io.Copy from an *os.File, or an io.LimitedReader of one) reaches the
// underlying writer's ReadFrom, which net/http turns into sendfile on a
// plain TCP connection: the bytes never pass through user space.
func (r *Recorder) ReadFrom(src io.Reader) (int64, error) {
	if r.Status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	var n int64
	var err error
	if rf, ok := r.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(src)
	} else {
		n, err = io.Copy(writerOnly{r.ResponseWriter}, src)
	}
	r.Bytes += n
	return n, err
}

// writerOnly hides every method but Write, so io.Copy does not come back
// to ReadFrom.
type writerOnly struct{ io.Writer }

// Unwrap lets http.ResponseController reach the underlying writer (to
// flush a stream).
func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// CountBytes counts n body bytes that a writer below r sent without
// their passing through r (a body sent by reference).
func (r *Recorder) CountBytes(n int64) { r.Bytes += n }

// NewRequestID returns a fresh request ID (16 upper-case hex digits) for
// the x-amz-request-id header and the logs, shared by every HTTP surface.
func NewRequestID() string {
	var b [8]byte
	rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}
