package adminclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/twinlake/twinlake/internal/trace"
)

// TraceOptions selects the events of a trace stream. Zero fields match
// everything.
type TraceOptions struct {
	Types      trace.Type // mask of event kinds; 0 means trace.Default
	FuncName   string     // glob on the event's funcname, e.g. "catalogScanner.*"
	Path       string     // glob on the event's path
	StatusCode int        // exact HTTP status
	// Verbose keeps each event's msg and attrs; without it the server drops
	// them to save bandwidth.
	Verbose bool
}

func (o TraceOptions) query() url.Values {
	q := url.Values{}
	if o.Types != 0 {
		q.Set(QueryCall, o.Types.String())
	}
	if o.FuncName != "" {
		q.Set(QueryFuncName, o.FuncName)
	}
	if o.Path != "" {
		q.Set(QueryPath, o.Path)
	}
	if o.StatusCode != 0 {
		q.Set(QueryStatus, strconv.Itoa(o.StatusCode))
	}
	if o.Verbose {
		q.Set(QueryVerbose, "true")
	}
	return q
}

// TraceStream reads events from a live trace, in the style of bufio.Scanner:
// call Next until it returns false, then Err. It is not safe for concurrent
// use. The caller must Close it; cancelling the context passed to Trace also
// ends it.
type TraceStream struct {
	ctx  context.Context
	body io.ReadCloser
	dec  *json.Decoder
	ev   trace.Event
	err  error
}

// Trace opens a live stream of the server's trace events matching opts. An
// error answered before the stream starts (bad credentials, a bad glob) is
// returned here as an *Error.
func (c *Client) Trace(ctx context.Context, opts TraceOptions) (*TraceStream, error) {
	resp, err := c.do(ctx, http.MethodGet, PathTrace, opts.query(), nil)
	if err != nil {
		return nil, err
	}
	return &TraceStream{ctx: ctx, body: resp.Body, dec: json.NewDecoder(resp.Body)}, nil
}

// Next waits for the next event and reports whether there is one. It
// returns false when the server ends the stream, the context is done, or an
// error occurs.
func (s *TraceStream) Next() bool {
	if s.err != nil {
		return false
	}
	var ev trace.Event
	if err := s.dec.Decode(&ev); err != nil {
		s.err = err
		return false
	}
	ev.Type, _ = trace.ParseType(ev.TypeName)
	s.ev = ev
	return true
}

// Event returns the event Next found.
func (s *TraceStream) Event() trace.Event { return s.ev }

// Err returns why the stream ended: nil when the server closed it, the
// context's error when the context ended it, otherwise the read or decode
// error.
func (s *TraceStream) Err() error {
	switch {
	case s.err == nil || errors.Is(s.err, io.EOF):
		return nil
	case s.ctx.Err() != nil:
		return s.ctx.Err()
	}
	return fmt.Errorf("admin trace: %w", s.err)
}

// Close ends the stream and releases its connection.
func (s *TraceStream) Close() error { return s.body.Close() }
