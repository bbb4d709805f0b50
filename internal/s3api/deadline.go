package s3api

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// Body deadlines. A request body must keep arriving: each read may wait at
// most the idle timeout for its next bytes, and the whole body must arrive
// within the overall deadline counted from the request's start. A slow
// upload that keeps making progress therefore passes however long it takes
// up to the overall deadline, while a client that declares 5 GiB, sends 16
// bytes and goes silent holds its connection for one idle timeout only.
// Reading the headers is bounded by the HTTP server's ReadHeaderTimeout
// (internal/app), before this handler runs.

// Defaults of the body timeouts while no setting was applied.
const (
	DefaultBodyIdleTimeout = time.Minute
	DefaultBodyDeadline    = 24 * time.Hour
)

// errRequestTimeout is S3's answer to a body that stopped arriving.
var errRequestTimeout = apiErr("RequestTimeout", http.StatusBadRequest,
	"Your socket connection to the server was not read from or written to within the timeout period. Idle connections will be closed.")

// bodyTimeouts holds the live values of the body deadlines.
type bodyTimeouts struct {
	idle, total atomic.Int64 // nanoseconds
}

// SetBodyTimeouts sets how long a request body may go without progress
// (idle) and how long the whole body may take (total); a value <= 0 keeps
// the default. Safe to call while serving; requests already reading keep
// the values they started with.
func (s *Server) SetBodyTimeouts(idle, total time.Duration) {
	if idle <= 0 {
		idle = DefaultBodyIdleTimeout
	}
	if total <= 0 {
		total = DefaultBodyDeadline
	}
	s.timeouts.idle.Store(int64(idle))
	s.timeouts.total.Store(int64(total))
}

func (s *Server) bodyTimeouts() (idle, total time.Duration) {
	idle, total = time.Duration(s.timeouts.idle.Load()), time.Duration(s.timeouts.total.Load())
	if idle <= 0 {
		idle = DefaultBodyIdleTimeout
	}
	if total <= 0 {
		total = DefaultBodyDeadline
	}
	return idle, total
}

// deadlineBody enforces the body deadlines on the connection under a
// request body: before each read it moves the connection's read deadline
// to the sooner of now+idle and the overall end, and once the body is done
// it lifts the deadline again, so that net/http's own wait for the client
// closing (and a long response) is never cut short.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration
	end  time.Time
	set  bool // a deadline is in force on the connection
	done bool
}

func newDeadlineBody(w http.ResponseWriter, body io.ReadCloser, idle, total time.Duration, start time.Time) *deadlineBody {
	return &deadlineBody{ReadCloser: body, rc: http.NewResponseController(w), idle: idle, end: start.Add(total)}
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	if b.done {
		return b.ReadCloser.Read(p)
	}
	now := time.Now()
	if !now.Before(b.end) {
		b.done, b.set = true, false
		b.rc.SetReadDeadline(now)
		return 0, errRequestTimeout
	}
	dl := now.Add(b.idle)
	if dl.After(b.end) {
		dl = b.end
	}
	if b.rc.SetReadDeadline(dl) == nil {
		b.set = true
	}
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded):
		// Leave the deadline in the past: net/http's attempt to drain
		// the rest of the body fails at once and the connection closes.
		b.done, b.set = true, false
		return n, errRequestTimeout
	default: // io.EOF or a failure: the body is over either way
		b.finish()
	}
	return n, err
}

// finish lifts the read deadline this body set.
func (b *deadlineBody) finish() {
	b.done = true
	if b.set {
		b.rc.SetReadDeadline(time.Time{})
		b.set = false
	}
}

func (b *deadlineBody) Close() error {
	if !b.done {
		b.finish()
	}
	return b.ReadCloser.Close()
}
