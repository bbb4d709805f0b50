package objcmd

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/trace"
)

// watchEvents maps the S3 calls watch reports to their event type (mc's
// --events: put, delete, get) and the S3 event name a bucket notification
// would carry.
var watchEvents = map[string]struct{ kind, name string }{
	"s3.PutObject":               {"put", "s3:ObjectCreated:Put"},
	"s3.PostObject":              {"put", "s3:ObjectCreated:Post"},
	"s3.CopyObject":              {"put", "s3:ObjectCreated:Copy"},
	"s3.CompleteMultipartUpload": {"put", "s3:ObjectCreated:CompleteMultipartUpload"},
	"s3.PutObjectTagging":        {"put", "s3:ObjectCreated:PutTagging"},
	"s3.DeleteObjectTagging":     {"put", "s3:ObjectCreated:DeleteTagging"},
	"s3.PutObjectRetention":      {"put", "s3:ObjectCreated:PutRetention"},
	"s3.PutObjectLegalHold":      {"put", "s3:ObjectCreated:PutLegalHold"},
	"s3.DeleteObject":            {"delete", "s3:ObjectRemoved:Delete"},
	"s3.DeleteObjects":           {"delete", "s3:ObjectRemoved:DeleteObjects"},
	"s3.GetObject":               {"get", "s3:ObjectAccessed:Get"},
	"s3.HeadObject":              {"get", "s3:ObjectAccessed:Head"},
}

// watchFlags are the watch command's flags, as mc watch has them.
type watchFlags struct {
	events         []string
	prefix, suffix string
}

// watchEvent is one reported event as printed.
type watchEvent struct {
	Time   time.Time `json:"time"`
	Event  string    `json:"event"`
	Path   string    `json:"path"`
	Size   int64     `json:"size,omitempty"`
	Source string    `json:"source,omitempty"` // the client's address
}

func newWatchCmd(opts *cmdutil.Options) *cobra.Command {
	f := watchFlags{events: []string{"put", "delete"}}
	cmd := &cobra.Command{
		Use:   "watch ALIAS/BUCKET[/PREFIX]",
		Short: "Watch a bucket for object events as clients write, remove and read",
		Long: `Print an event for each successful S3 call that creates, changes, removes
or reads an object of the bucket, as clients make them on this site, until
interrupted. --events picks the kinds (put, delete, get; default put,delete);
--prefix and --suffix narrow the keys (a PREFIX in the path is the same as
--prefix).

watch follows the site's trace, so the alias's credentials need
admin:ServerTrace. It shows what clients do on this site: objects arriving
from a replication peer are not client calls. A multi-object delete names no
keys in the trace, so it shows as one s3:ObjectRemoved:DeleteObjects event
for the bucket.`,
		Example: `  twinlake watch site1/photos
  twinlake watch --events put,delete,get --suffix .jpg site1/photos
  twinlake watch --json site1/logs/2024/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWatch(cmd, opts, args[0], f)
		},
	}
	cmd.Flags().StringSliceVar(&f.events, "events", f.events, "kinds of event to show: put, delete, get (comma-separated)")
	cmd.Flags().StringVar(&f.prefix, "prefix", "", "only keys starting with this")
	cmd.Flags().StringVar(&f.suffix, "suffix", "", "only keys ending with this")
	return cmd
}

func runWatch(cmd *cobra.Command, opts *cmdutil.Options, arg string, f watchFlags) error {
	for _, k := range f.events {
		if !slices.Contains([]string{"put", "delete", "get"}, k) {
			return fmt.Errorf("watch: unknown event type %q (want put, delete or get)", k)
		}
	}
	t, c, err := opts.BucketClient(arg)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if ok, err := c.BucketExists(ctx, t.Bucket); err != nil {
		return cmdutil.S3Err("watch "+arg, err)
	} else if !ok {
		return fmt.Errorf("watch %s: NoSuchBucket: the bucket does not exist", arg)
	}
	prefix := t.Key + f.prefix
	adm, err := opts.AdminClient(t.Alias)
	if err != nil {
		return err
	}
	stream, err := adm.Trace(ctx, adminclient.TraceOptions{Types: trace.S3, Path: "/" + t.Bucket + "*", Verbose: true})
	if err != nil {
		return fmt.Errorf("watch follows %s's trace (it needs admin:ServerTrace): %w", t.Alias, err)
	}
	defer stream.Close()
	if !opts.Quiet && !opts.JSON {
		fmt.Fprintf(cmd.ErrOrStderr(), "watch: watching %s (interrupt to stop) ...\n", arg)
	}
	bucketPath := "/" + t.Bucket + "/"
	for stream.Next() {
		ev, ok := matchWatch(stream.Event(), bucketPath, prefix, f)
		if !ok {
			continue
		}
		ev.Path = t.Alias + "/" + t.Bucket + "/" + ev.Path
		human := fmt.Sprintf("[%s] %s %s %s", ev.Time.UTC().Format("2006-01-02 15:04:05 MST"),
			fmtWatchSize(ev), ev.Event, ev.Path)
		if err := cmdutil.PrintResult(cmd.OutOrStdout(), opts, ev, human); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil // interrupted: the normal end of a watch
	}
	if err := stream.Err(); err != nil {
		return fmt.Errorf("watch: the trace of %s ended: %w", t.Alias, err)
	}
	return fmt.Errorf("watch: %s closed its trace", t.Alias)
}

// matchWatch turns a trace event into a watch event, with the key as its
// path, when it is a successful call of a watched kind on a key that
// passes the filters.
func matchWatch(e trace.Event, bucketPath, prefix string, f watchFlags) (watchEvent, bool) {
	kind, ok := watchEvents[e.FuncName]
	if !ok || !slices.Contains(f.events, kind.kind) || e.StatusCode < 200 || e.StatusCode > 299 {
		return watchEvent{}, false
	}
	key, ok := strings.CutPrefix(e.Path, bucketPath)
	if !ok {
		if e.Path+"/" != bucketPath {
			return watchEvent{}, false // another bucket
		}
		key = "" // the bucket itself (/b rather than /b/)
	}
	if e.FuncName != "s3.DeleteObjects" && (!strings.HasPrefix(key, prefix) || !strings.HasSuffix(key, f.suffix)) {
		return watchEvent{}, false
	}
	ev := watchEvent{Time: e.Time, Event: kind.name, Path: key, Source: e.RemoteAddr}
	switch kind.kind {
	case "put":
		if e.FuncName == "s3.PutObject" {
			ev.Size = e.BytesIn
			if n, err := strconv.ParseInt(e.Attrs["decodedLength"], 10, 64); err == nil {
				ev.Size = n // the body came in signed chunks
			}
		}
	case "get":
		if e.FuncName == "s3.GetObject" {
			ev.Size = e.BytesOut
		}
	}
	return ev, true
}

func fmtWatchSize(ev watchEvent) string {
	if ev.Size == 0 {
		return fmt.Sprintf("%9s", "-")
	}
	return fmt.Sprintf("%9s", cmdutil.FmtBytes(ev.Size))
}
