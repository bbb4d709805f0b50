package admin

import (
	"errors"
	"net/url"
	"testing"

	"github.com/twinlake/twinlake/internal/trace"
)

func TestParseTraceQuery(t *testing.T) {
	for _, tc := range []struct {
		query   string
		want    trace.Filter
		verbose bool
		bad     bool
	}{
		{query: "", want: trace.Filter{}},
		{query: "call=s3,tables&call=admin&funcname=s3.*&path=/b/*&status=403&verbose=true",
			want:    trace.Filter{Types: trace.S3 | trace.Tables | trace.Admin, FuncName: "s3.*", Path: "/b/*", StatusCode: 403},
			verbose: true},
		{query: "call=s3,,", want: trace.Filter{Types: trace.S3}},
		{query: "call=nope", bad: true},
		{query: "status=99", bad: true},
		{query: "status=abc", bad: true},
		{query: "verbose=maybe", bad: true},
		{query: "funcname=%5B", bad: true},
	} {
		q, _ := url.ParseQuery(tc.query)
		got, err := parseTraceQuery(q)
		if tc.bad {
			if !errors.Is(err, ErrBadRequest) {
				t.Errorf("%q: err = %v, want ErrBadRequest", tc.query, err)
			}
			continue
		}
		if err != nil || got.filter != tc.want || got.verbose != tc.verbose {
			t.Errorf("%q = %+v, %v", tc.query, got, err)
		}
	}
}

// FuzzParseTraceQuery checks that no query string makes the trace stream's
// parser, or matching with the filter it accepts, panic.
func FuzzParseTraceQuery(f *testing.F) {
	for _, seed := range []string{"call=s3,tables-scan&funcname=catalogScanner.*&status=403&verbose=1", "path=[", "call=%00", "funcname=*a*b*"} {
		f.Add(seed)
	}
	ev := &trace.Event{Type: trace.S3, FuncName: "s3.PutObject", Path: "/b/k", StatusCode: 200}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		opts, err := parseTraceQuery(q)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("%q: %v", raw, err)
			}
			return
		}
		opts.filter.Match(ev)
	})
}
