package objcmd

import (
	"fmt"
	"os/exec"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/bench"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// findFlags are the find command's flags, as mc find has them.
type findFlags struct {
	name, path, regex    string
	olderThan, newerThan string
	larger, smaller      string
	print, exec          string
	maxDepth             int
}

// findQuery is findFlags parsed: a pure predicate over walk entries.
type findQuery struct {
	name, path      string
	regex           *regexp.Regexp
	age             ageFilter
	larger, smaller int64 // -1: no bound
	maxDepth        int
}

func newFindCmd(opts *cmdutil.Options) *cobra.Command {
	var f findFlags
	cmd := &cobra.Command{
		Use:   "find ALIAS/BUCKET[/PREFIX] | DIR",
		Short: "Find objects (or local files) by name, path, age and size",
		Long: `List the objects under a bucket or prefix (or the files under a local
directory) that match every given test. --name matches the base name and
--path the whole path against a wildcard pattern ('*' any run of characters,
'/' included in --path, '?' one character); --regex matches the whole path.
Ages take s, m, h, d and w units ("7d", "1w2d"); sizes take B, KiB, MiB, GiB
(or KB, MB, GB).

--print FORMAT prints a line per match with {} (the full path), {base},
{dir}, {size}, {time} and {etag} replaced; --exec CMD runs CMD (split on
spaces, no shell) with the same replacements, once per match, and exits 1 if
any run failed.`,
		Example: `  twinlake find site1/photos --name "*.jpg"
  twinlake find site1/logs --path "*/2024/*" --older-than 30d
  twinlake find site1/data --larger 1GiB --print "{size} {}"
  twinlake find site1/inbox --newer-than 1h --exec "twinlake cp {} ./inbox/"
  twinlake find ./local --regex "\.parquet$"`,
		Args: cobra.ExactArgs(1),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			q, err := f.query()
			if err != nil {
				return err
			}
			root, err := openWalkRoot(opts, args[0])
			if err != nil {
				return err
			}
			return runFind(cmd, opts, root, q, f)
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.name, "name", "", "base name matches this wildcard pattern")
	fl.StringVar(&f.path, "path", "", "full path matches this wildcard pattern")
	fl.StringVar(&f.regex, "regex", "", "full path matches this regular expression")
	fl.StringVar(&f.olderThan, "older-than", "", "last modified longer ago than this (7d, 12h)")
	fl.StringVar(&f.newerThan, "newer-than", "", "last modified more recently than this (7d, 12h)")
	fl.StringVar(&f.larger, "larger", "", "larger than this size (64MiB)")
	fl.StringVar(&f.smaller, "smaller", "", "smaller than this size (1KiB)")
	fl.IntVar(&f.maxDepth, "maxdepth", 0, "descend at most this many folders (0: no limit)")
	fl.StringVar(&f.print, "print", "", "print this format per match ({} {base} {dir} {size} {time} {etag})")
	fl.StringVar(&f.exec, "exec", "", "run this command per match ({} and the --print placeholders)")
	return cmd
}

func (f findFlags) query() (findQuery, error) {
	q := findQuery{name: f.name, path: f.path, larger: -1, smaller: -1, maxDepth: f.maxDepth}
	var err error
	if f.regex != "" {
		if q.regex, err = regexp.Compile(f.regex); err != nil {
			return q, fmt.Errorf("--regex: %w", err)
		}
	}
	if q.age, err = newAgeFilter(f.olderThan, f.newerThan); err != nil {
		return q, err
	}
	for _, s := range []struct {
		flag, v string
		dst     *int64
	}{{"--larger", f.larger, &q.larger}, {"--smaller", f.smaller, &q.smaller}} {
		if s.v == "" {
			continue
		}
		if *s.dst, err = parseByteSize(s.v); err != nil {
			return q, fmt.Errorf("%s: %w", s.flag, err)
		}
	}
	if f.maxDepth < 0 {
		return q, fmt.Errorf("--maxdepth %d: want 0 (no limit) or more", f.maxDepth)
	}
	return q, nil
}

// parseByteSize is bench.ParseSize that also takes 0.
func parseByteSize(s string) (int64, error) {
	if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && n >= 0 {
		return n, nil
	}
	return bench.ParseSize(s)
}

// match reports whether e passes every test.
func (q findQuery) match(e walkEntry) bool {
	if q.maxDepth > 0 && strings.Count(e.Rel, "/") >= q.maxDepth {
		return false
	}
	if q.name != "" && !wildcardMatch(q.name, path.Base(e.Rel)) {
		return false
	}
	if q.path != "" && !wildcardMatch(q.path, e.Full) && !wildcardMatch(q.path, e.Rel) {
		return false
	}
	if q.regex != nil && !q.regex.MatchString(e.Full) {
		return false
	}
	if q.larger >= 0 && e.Size <= q.larger || q.smaller >= 0 && e.Size >= q.smaller {
		return false
	}
	return q.age.keep(e.ModTime)
}

// wildcardMatch matches s against a pattern of '*' (any run, '/' included)
// and '?' (one character); everything else is literal.
func wildcardMatch(pattern, s string) bool {
	p, t := []rune(pattern), []rune(s)
	pi, ti, star, mark := 0, 0, -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == t[ti]):
			pi++
			ti++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ti
			pi++
		case star >= 0:
			pi, mark = star+1, mark+1
			ti = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// findResult is one match as printed with --json.
type findResult struct {
	Status       string    `json:"status"`
	Key          string    `json:"key"`
	Size         int64     `json:"size"`
	LastModified time.Time `json:"lastModified"`
	ETag         string    `json:"etag,omitempty"`
}

func runFind(cmd *cobra.Command, opts *cmdutil.Options, root walkRoot, q findQuery, f findFlags) error {
	failed := 0
	err := root.walk(cmd.Context(), false, func(e walkEntry) error {
		if !q.match(e) {
			return nil
		}
		if f.exec != "" {
			if err := findExec(cmd, f.exec, e); err != nil {
				failed++
				cmdutil.PrintItemErr(cmd, opts, err)
			}
			return nil
		}
		r := findResult{Status: "success", Key: e.Full, Size: e.Size, LastModified: e.ModTime.UTC(), ETag: e.ETag}
		human := e.Full
		if f.print != "" {
			human = expandFind(f.print, e)
		}
		return cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, human)
	})
	if err != nil {
		return err
	}
	if failed > 0 {
		return cmdutil.ItemsFailed(failed, "--exec runs")
	}
	return nil
}

// expandFind replaces the placeholders of a --print or --exec format.
func expandFind(format string, e walkEntry) string {
	return strings.NewReplacer(
		"{}", e.Full,
		"{base}", path.Base(e.Rel),
		"{dir}", strings.TrimSuffix(e.Full, path.Base(e.Rel)),
		"{size}", strconv.FormatInt(e.Size, 10),
		"{time}", e.ModTime.UTC().Format(time.RFC3339),
		"{etag}", e.ETag,
	).Replace(format)
}

// findExec runs --exec for one match, its output passed through.
func findExec(cmd *cobra.Command, command string, e walkEntry) error {
	fields := strings.Fields(command)
	if len(fields) == 0 {
		return fmt.Errorf("--exec: empty command")
	}
	for i := range fields {
		fields[i] = expandFind(fields[i], e)
	}
	c := exec.CommandContext(cmd.Context(), fields[0], fields[1:]...)
	c.Stdout, c.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := c.Run(); err != nil {
		return fmt.Errorf("--exec %s for %s: %w", fields[0], e.Full, err)
	}
	return nil
}
