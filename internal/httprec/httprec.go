// Package httprec records what a handler wrote to an http.ResponseWriter:
// the status and the body bytes, for the traces and metrics of every HTTP
// surface.
package httprec

import "net/http"

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

// Unwrap lets http.ResponseController reach the underlying writer (to
// flush a stream).
func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
