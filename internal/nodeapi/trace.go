package nodeapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/twinlake/twinlake/internal/trace"
)

const pathTrace = Prefix + "trace"

// traceQuery encodes a trace filter for the node API.
func traceQuery(f trace.Filter) string {
	q := url.Values{}
	q.Set("types", strconv.FormatUint(uint64(f.Types), 10))
	if f.FuncName != "" {
		q.Set("funcname", f.FuncName)
	}
	if f.Path != "" {
		q.Set("path", f.Path)
	}
	if f.StatusCode != 0 {
		q.Set("status", strconv.Itoa(f.StatusCode))
	}
	return q.Encode()
}

// parseTraceQuery reads what traceQuery wrote.
func parseTraceQuery(q url.Values) (trace.Filter, error) {
	var f trace.Filter
	types, err := strconv.ParseUint(q.Get("types"), 10, 32)
	if err != nil || trace.Type(types)&^trace.All != 0 {
		return f, fmt.Errorf("%w: trace types %q", errBadRequest, q.Get("types"))
	}
	f.Types, f.FuncName, f.Path = trace.Type(types), q.Get("funcname"), q.Get("path")
	if v := q.Get("status"); v != "" {
		if f.StatusCode, err = strconv.Atoi(v); err != nil {
			return f, fmt.Errorf("%w: status %q", errBadRequest, v)
		}
	}
	return f, nil
}

// traceKeepAlive is how often an idle trace stream sends a blank line,
// so that a node gone silent is told from one with nothing to say.
const traceKeepAlive = 5 * time.Second

// traceStream streams this node's trace events matching the query as
// NDJSON, until the caller goes away.
func (s *Server) traceStream(w http.ResponseWriter, r *http.Request) error {
	if s.bus == nil {
		return errNoRoute
	}
	f, err := parseTraceQuery(r.URL.Query())
	if err != nil {
		return err
	}
	events, cancel := s.bus.Subscribe(f, 4096)
	defer cancel()
	trace.Serve(w, r, traceKeepAlive, nil, events)
	return nil
}

// Trace streams the node's trace events matching f until ctx ends or
// the node goes away; the channel is closed then.
func (d *Drive) Trace(ctx context.Context, f trace.Filter) (<-chan trace.Event, error) {
	resp, err := d.do(ctx, http.MethodGet, pathTrace+"?"+traceQuery(f), nil, nil)
	if err != nil {
		return nil, err
	}
	out := make(chan trace.Event, 256)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if len(sc.Bytes()) == 0 {
				continue // keep-alive
			}
			var ev trace.Event
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				return
			}
			ev.Type, _ = trace.ParseType(ev.TypeName)
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
