package admincmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/trace"
)

// adminTraceFlags are the filters of `admin trace`.
type adminTraceFlags struct {
	verbose    bool
	all        bool
	calls      []string
	funcName   string
	path       string
	statusCode int
}

func newAdminTraceCmd(opts *cmdutil.Options) *cobra.Command {
	var f adminTraceFlags
	cmd := &cobra.Command{
		Use:   "trace [-v] [-a | --call TYPE] [--funcname GLOB] [--path GLOB] [--status-code N] ALIAS",
		Short: "Stream a site's calls and decisions live, until interrupted",
		Long: `Stream a site's trace events live, one line each, until interrupted.
Types (--call): ` + trace.All.String() + `. Without --call or --all every
type but storage and internal is shown: storage (the shard reads and
writes on each node's drive, several per object call) and internal (a
request a node passes to the leader, and the leader's calls to etcd) only
when asked for. On a
multi-node site the stream follows every node. Without -v a line shows
time, node, function name, path, status and duration; -v adds msg, error
and attributes.`,
		Example: `  twinlake admin trace site1
  twinlake admin trace -v --call tables-scan site1
  twinlake admin trace -v --call tables-scan --funcname 'catalogScanner.cycle' site1
  twinlake admin trace -v --funcname 's3.ReplicationRequest' --status-code 403 site1
  twinlake admin trace --call s3,admin --path '/photos/*' --json site1
  twinlake admin trace --call storage site1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			topts, err := f.options()
			if err != nil {
				return err
			}
			c, err := opts.AdminClient(args[0])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			stream, err := c.Trace(ctx, topts)
			if err != nil {
				return fmt.Errorf("admin trace %s: %w", args[0], err)
			}
			defer stream.Close()
			out := cmd.OutOrStdout()
			for stream.Next() {
				if err := printTraceEvent(out, opts.JSON, f.verbose, stream.Event()); err != nil {
					return err
				}
			}
			if err := stream.Err(); err != nil && ctx.Err() == nil {
				return fmt.Errorf("admin trace %s: %w", args[0], err)
			}
			return nil // the operator interrupted, or the server ended the stream
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "show each event's msg, error and attributes")
	fl.BoolVarP(&f.all, "all", "a", false, "trace every type, storage included")
	fl.StringSliceVar(&f.calls, "call", nil, "trace only these types (repeatable or comma-separated): "+trace.All.String())
	fl.StringVar(&f.funcName, "funcname", "", "trace only function names matching this glob, e.g. 'catalogScanner.*'")
	fl.StringVar(&f.path, "path", "", "trace only paths matching this glob, e.g. '/photos/*'")
	fl.IntVar(&f.statusCode, "status-code", 0, "trace only calls answered with this HTTP status")
	return cmd
}

// errUnknownTraceType is returned for a --call naming no trace type.
var errUnknownTraceType = errors.New("unknown trace type")

func (f *adminTraceFlags) options() (adminclient.TraceOptions, error) {
	o := adminclient.TraceOptions{FuncName: f.funcName, Path: f.path, StatusCode: f.statusCode, Verbose: f.verbose}
	if f.all {
		if len(f.calls) > 0 {
			return o, errors.New("--all and --call: give one of them")
		}
		o.Types = trace.All
	}
	for _, name := range f.calls {
		t, ok := trace.ParseType(strings.TrimSpace(name))
		if !ok {
			return o, fmt.Errorf("--call: %w %q (want one of %s)", errUnknownTraceType, name, trace.All)
		}
		o.Types |= t
	}
	return o, nil
}

// printTraceEvent writes one event as a JSON line with --json, else as
// "time node funcname path status duration" and, verbose, msg, error and
// attrs.
func printTraceEvent(w io.Writer, asJSON, verbose bool, ev trace.Event) error {
	if asJSON {
		return json.NewEncoder(w).Encode(ev)
	}
	status := "-"
	if ev.StatusCode != 0 {
		status = strconv.Itoa(ev.StatusCode)
	}
	path := ev.Path
	if path == "" {
		path = "-"
	}
	var b strings.Builder
	b.WriteString(ev.Time.Local().Format("2006-01-02T15:04:05.000"))
	if ev.Node != "" {
		b.WriteString(" " + ev.Node)
	}
	fmt.Fprintf(&b, " %s %s %s %s", ev.FuncName, path, status, ev.Duration.Round(time.Microsecond))
	if verbose {
		if ev.Msg != "" {
			fmt.Fprintf(&b, " msg=%q", ev.Msg)
		}
		if ev.Error != "" {
			fmt.Fprintf(&b, " error=%q", ev.Error)
		}
		keys := make([]string, 0, len(ev.Attrs))
		for k := range ev.Attrs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%q", k, ev.Attrs[k])
		}
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}
