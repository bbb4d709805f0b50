package admin

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/trace"
)

// traceOptions is a parsed trace query.
type traceOptions struct {
	filter  trace.Filter
	verbose bool
}

// parseTraceQuery reads the trace stream's query, reporting every bad
// parameter at once.
func parseTraceQuery(q url.Values) (traceOptions, error) {
	var opts traceOptions
	var problems []string
	for _, list := range q[adminclient.QueryCall] {
		for _, name := range strings.Split(list, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			t, ok := trace.ParseType(name)
			if !ok {
				problems = append(problems, fmt.Sprintf("unknown trace type %q (want one of %s)", name, trace.All))
				continue
			}
			opts.filter.Types |= t
		}
	}
	for _, g := range []struct {
		param string
		dst   *string
	}{{adminclient.QueryFuncName, &opts.filter.FuncName}, {adminclient.QueryPath, &opts.filter.Path}} {
		*g.dst = q.Get(g.param)
		if _, err := path.Match(*g.dst, ""); err != nil {
			problems = append(problems, fmt.Sprintf("%s %q is not a valid glob", g.param, *g.dst))
		}
	}
	if v := q.Get(adminclient.QueryStatus); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 599 {
			problems = append(problems, fmt.Sprintf("status %q is not an HTTP status code", v))
		}
		opts.filter.StatusCode = n
	}
	if v := q.Get(adminclient.QueryVerbose); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("verbose %q is not true or false", v))
		}
		opts.verbose = b
	}
	if len(problems) > 0 {
		return traceOptions{}, fmt.Errorf("%w: %s", ErrBadRequest, strings.Join(problems, "; "))
	}
	return opts, nil
}

// traceStream answers GET trace with NDJSON trace events, one per line,
// flushed as they happen, until the client goes away. Idle streams get a
// blank line every KeepAlive. A client that reads too slowly loses events
// rather than slowing the server (see trace.Bus).
func (s *Server) traceStream(w http.ResponseWriter, r *http.Request, c *call) error {
	opts, err := parseTraceQuery(r.URL.Query())
	if err != nil {
		return err
	}
	c.msg = "filter " + r.URL.RawQuery
	events, cancel := s.cfg.Trace.Subscribe(opts.filter, s.cfg.TraceBuffer)
	defer cancel()
	var remote <-chan trace.Event // nil, which never delivers, on one node
	if s.cfg.RemoteTrace != nil {
		ctx, stop := context.WithCancel(r.Context())
		defer stop()
		remote = s.cfg.RemoteTrace(ctx, opts.filter)
	}

	var edit func(*trace.Event)
	if !opts.verbose {
		edit = func(ev *trace.Event) { ev.Msg, ev.Attrs = "", nil }
	}
	trace.Serve(w, r, s.cfg.KeepAlive, edit, events, remote)
	return nil
}
