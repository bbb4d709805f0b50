package objcmd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// mirrorFlags are the mirror command's flags, as mc mirror has them.
type mirrorFlags struct {
	overwrite, remove, dryRun bool
	newerThan, olderThan      string
	exclude                   []string
	workers                   int
	attrs                     []string
	watch                     bool
}

func newMirrorCmd(opts *cmdutil.Options) *cobra.Command {
	var f mirrorFlags
	cmd := &cobra.Command{
		Use:   "mirror SOURCE TARGET",
		Short: "Make a target folder, bucket or prefix hold what the source holds",
		Long: `Copy every object (or file) under SOURCE that TARGET lacks, in parallel:
local directory to bucket, bucket to local directory, or bucket to bucket
(server-side within one alias). SOURCE and TARGET are ALIAS/BUCKET[/PREFIX]
or local directories; a missing target bucket or directory is created.

Mirroring is resumable: an object already at the target with the same size
and content (ETag, or a local file's MD5) is skipped, so re-running after an
interruption copies only what is left. An object that exists at the target
but differs is an error unless --overwrite replaces it. --remove deletes
what is at the target but not at the source (excluded names are kept).
--exclude skips names matching a wildcard ('*', '?'), --newer-than and
--older-than copy only sources of that age (7d, 12h, 1w2d). --dry-run
prints what would be done and does nothing. Exits 1 if any object failed.

--watch keeps going after the first pass: it follows the source site's live
trace (the source must be ALIAS/BUCKET[/PREFIX], and its credentials need
admin:ServerTrace) and mirrors each object as a client writes, tags or deletes
it there, until interrupted. Its cost is the changes, not the number of
objects. Changes that reach the source by site replication are not in its
trace: watch the site the clients write to.`,
		Example: `  twinlake mirror ./photos site1/photos
  twinlake mirror --overwrite --remove site1/photos site2/photos
  twinlake mirror --exclude "*.tmp" --exclude "cache/*" site1/data ./backup
  twinlake mirror --newer-than 1d --dry-run site1/logs site2/logs
  twinlake mirror --watch --overwrite --remove site1/photos ./photos`,
		Args: cobra.ExactArgs(2),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			if f.workers < 1 {
				return fmt.Errorf("--max-workers %d: want 1 or more", f.workers)
			}
			age, err := newAgeFilter(f.olderThan, f.newerThan)
			if err != nil {
				return err
			}
			m, err := openMirror(cmd, opts, args[0], args[1], f)
			if err != nil {
				return err
			}
			m.age = age
			if f.watch && (m.src.end.remote == nil || f.dryRun) {
				return errors.New("mirror --watch follows a site's trace: the source must be ALIAS/BUCKET[/PREFIX], without --dry-run")
			}
			err = m.run()
			if !f.watch || (err != nil && !errors.Is(err, cmdutil.ErrItemsFailed)) {
				return err
			}
			return m.watch(cmd.Context())
		}),
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.overwrite, "overwrite", false, "replace target objects that differ from the source")
	fl.BoolVar(&f.remove, "remove", false, "remove target objects that are not at the source")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print what would be copied or removed; change nothing")
	fl.StringVar(&f.newerThan, "newer-than", "", "copy only sources modified more recently than this (7d, 12h)")
	fl.StringVar(&f.olderThan, "older-than", "", "copy only sources modified longer ago than this (7d, 12h)")
	fl.StringArrayVar(&f.exclude, "exclude", nil, "skip names matching this wildcard (repeatable)")
	fl.IntVar(&f.workers, "max-workers", 4, "objects copied at once")
	fl.StringArrayVar(&f.attrs, "attr", nil, "metadata key=value for copied objects (repeatable)")
	fl.BoolVarP(&f.watch, "watch", "w", false, "after the first pass, keep mirroring changes as clients make them at the source")
	return cmd
}

// mirror is one mirror run: both sides, the copier and the tallies.
type mirror struct {
	cmd      *cobra.Command
	opts     *cmdutil.Options
	f        mirrorFlags
	age      ageFilter
	src, dst walkRoot
	job      *cpJob

	mu                       sync.Mutex
	copied, skipped, removed int
	failed                   int
	bytes                    int64
}

// mirrorOp is one planned change: copy rel (checking an existing target
// first when exists) or remove it from the target.
type mirrorOp struct {
	rel    string
	remove bool
	exists bool
}

func openMirror(cmd *cobra.Command, opts *cmdutil.Options, srcArg, dstArg string, f mirrorFlags) (*mirror, error) {
	meta, ctype, err := parseAttrs(f.attrs)
	if err != nil {
		return nil, err
	}
	src, err := openWalkRoot(opts, srcArg)
	if err != nil {
		return nil, err
	}
	cfg, err := opts.LoadConfig()
	if err != nil {
		return nil, err
	}
	if e := classifyCPArg(cfg, dstArg); e.remote == nil && !f.dryRun {
		if err := os.MkdirAll(e.local, 0o755); err != nil {
			return nil, fmt.Errorf("mirror: %w", err)
		}
	}
	dst, err := openWalkRoot(opts, dstArg)
	if err != nil && !(f.dryRun && errors.Is(err, os.ErrNotExist)) {
		return nil, err
	}
	if src.end.remote == nil && dst.end.remote == nil {
		return nil, errors.New("mirror needs an ALIAS/BUCKET[/PREFIX] on at least one side (use rsync for two local directories)")
	}
	// Every result is printed from a worker; one Write per line keeps them whole.
	cmd.SetOut(&syncWriter{w: cmd.OutOrStdout()})
	j := &cpJob{cmd: cmd, opts: opts, meta: meta, ctype: ctype, srcC: src.client, dstC: dst.client}
	if src.end.remote != nil && dst.end.remote != nil {
		j.sameSite = src.end.alias.URL == dst.end.alias.URL && src.end.alias.AccessKey == dst.end.alias.AccessKey
	}
	return &mirror{cmd: cmd, opts: opts, f: f, src: src, dst: dst, job: j}, nil
}

func (m *mirror) run() error {
	ctx := m.cmd.Context()
	start := time.Now()
	if err := m.ensureTargetBucket(ctx); err != nil {
		return err
	}
	a, err := m.src.collect(ctx)
	if err != nil {
		return err
	}
	b := map[string]walkEntry{}
	if m.dst.client != nil || m.dst.end.local != "" {
		if b, err = m.dst.collect(ctx); err != nil && !(m.f.dryRun && errors.Is(err, os.ErrNotExist)) {
			return err
		}
	}
	ops := planMirror(a, b, m.f.exclude, m.age, m.f.remove)
	m.skipped = len(a) - countCopies(ops) // excluded or too old/new count as left alone
	if !m.f.dryRun {
		m.job.prog = cmdutil.StartProgress(m.cmd, m.opts, "mirror")
		defer m.job.prog.Finish()
		var size int64
		for _, op := range ops {
			if !op.remove {
				size += a[op.rel].Size
			}
		}
		m.job.prog.SetTotal(int64(len(ops)), size)
	}
	work := make(chan mirrorOp)
	var wg sync.WaitGroup
	for range m.f.workers {
		wg.Go(func() {
			for op := range work {
				m.do(op, a[op.rel], b[op.rel])
			}
		})
	}
	for _, op := range ops {
		select {
		case work <- op:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mirror interrupted (re-run it to resume): %w", err)
	}
	return m.summary(time.Since(start))
}

// planMirror decides, without I/O, what to do with every name: copy the
// sources that pass the filters (checking the ones the target has), remove
// the target-only names when remove. The result is in name order.
func planMirror(src, dst map[string]walkEntry, exclude []string, age ageFilter, remove bool) []mirrorOp {
	var ops []mirrorOp
	for rel, e := range src {
		if excluded(rel, exclude) || !age.keep(e.ModTime) {
			continue
		}
		_, exists := dst[rel]
		ops = append(ops, mirrorOp{rel: rel, exists: exists})
	}
	if remove {
		for rel := range dst {
			if _, ok := src[rel]; !ok && !excluded(rel, exclude) {
				ops = append(ops, mirrorOp{rel: rel, remove: true})
			}
		}
	}
	slices.SortFunc(ops, func(x, y mirrorOp) int {
		if x.rel < y.rel {
			return -1
		}
		if x.rel > y.rel {
			return 1
		}
		return 0
	})
	return ops
}

func countCopies(ops []mirrorOp) int {
	n := 0
	for _, op := range ops {
		if !op.remove {
			n++
		}
	}
	return n
}

// excluded reports whether rel or its base name matches an --exclude.
func excluded(rel string, patterns []string) bool {
	for _, p := range patterns {
		if wildcardMatch(p, rel) || wildcardMatch(p, path.Base(rel)) {
			return true
		}
	}
	return false
}

// ensureTargetBucket creates a missing target bucket, as mc mirror does.
func (m *mirror) ensureTargetBucket(ctx context.Context) error {
	if m.dst.client == nil || m.f.dryRun {
		return nil
	}
	bucket := m.dst.end.remote.Bucket
	ok, err := m.dst.client.BucketExists(ctx, bucket)
	if err != nil {
		return cmdutil.S3Err("check bucket "+bucket, err)
	}
	if ok {
		return nil
	}
	return cmdutil.S3Err("make bucket "+bucket, m.dst.client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}))
}

// do carries out one op, reporting its outcome.
func (m *mirror) do(op mirrorOp, from, to walkEntry) {
	var err error
	switch {
	case op.remove:
		err = m.removeTarget(op.rel)
	case op.exists:
		same, cerr := sameObject(m.cmd.Context(), m.src, m.dst, from, to)
		switch {
		case cerr != nil:
			err = fmt.Errorf("compare %s with %s: %w", from.Full, to.Full, cerr)
		case same:
			m.tally(func() { m.skipped++ })
			m.job.prog.AddBytes(from.Size) // nothing to send: done as it is
			m.job.prog.ObjectDone()
			return
		case !m.f.overwrite:
			err = fmt.Errorf("`%s` exists and differs from `%s`: use --overwrite to replace it", to.Full, from.Full)
		default:
			err = m.copy(op.rel, from)
		}
	default:
		err = m.copy(op.rel, from)
	}
	if err != nil {
		m.tally(func() { m.failed++ })
		m.job.prog.ObjectDone()
		m.job.prog.Clear()
		cmdutil.PrintItemErr(m.cmd, m.opts, err)
	}
}

func (m *mirror) tally(f func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f()
}

// copy copies one source entry to the same name under the target.
func (m *mirror) copy(rel string, from walkEntry) error {
	if m.dst.client == nil && !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("refusing key %q: it would be written outside %s", rel, m.dst)
	}
	to := m.dst.join(rel)
	if m.f.dryRun {
		r := mirrorDryRun{Status: "success", Source: from.Full, Target: to, Size: from.Size, DryRun: true}
		return cmdutil.PrintResult(m.cmd.OutOrStdout(), m.opts, r, fmt.Sprintf("`%s` -> `%s` (%s) (dry run)", r.Source, r.Target, cmdutil.FmtBytes(r.Size)))
	}
	var err error
	switch {
	case m.src.client == nil:
		err = m.job.put(from.file, m.dst.target(rel))
	case m.dst.client == nil:
		err = m.job.get(m.src.target(rel), "", to)
	case strings.Contains(from.ETag, "-"):
		j := *m.job
		j.meta = map[string]string{sourceETagMeta: from.ETag}
		maps.Copy(j.meta, m.job.meta)
		err = j.copyRemote(m.src.target(rel), "", m.dst.target(rel))
	default:
		err = m.job.copyRemote(m.src.target(rel), "", m.dst.target(rel))
	}
	if err == nil {
		m.tally(func() { m.copied++; m.bytes += from.Size })
	}
	return err
}

// removeTarget removes a name the source lacks from the target.
func (m *mirror) removeTarget(rel string) error {
	to := m.dst.join(rel)
	if !m.f.dryRun {
		var err error
		if m.dst.client == nil {
			err = os.Remove(to)
		} else {
			t := m.dst.target(rel)
			err = cmdutil.S3Err("remove "+to, m.dst.client.RemoveObject(m.cmd.Context(), t.Bucket, t.Key, minio.RemoveObjectOptions{}))
		}
		if err != nil {
			return err
		}
		m.tally(func() { m.removed++ })
	}
	m.job.prog.ObjectDone()
	m.job.prog.Clear()
	r := mirrorRemoved{Status: "success", Key: to, Removed: true, DryRun: m.f.dryRun}
	human := fmt.Sprintf("Removed `%s`.", to)
	if m.f.dryRun {
		human = fmt.Sprintf("Would remove `%s` (dry run).", to)
	}
	return cmdutil.PrintResult(m.cmd.OutOrStdout(), m.opts, r, human)
}

// mirrorDryRun is a copy --dry-run would make.
type mirrorDryRun struct {
	Status string `json:"status"`
	Source string `json:"source"`
	Target string `json:"target"`
	Size   int64  `json:"size"`
	DryRun bool   `json:"dryRun"`
}

// mirrorRemoved is a target-only object --remove deleted (or would).
type mirrorRemoved struct {
	Status  string `json:"status"`
	Key     string `json:"key"`
	Removed bool   `json:"removed"`
	DryRun  bool   `json:"dryRun,omitempty"`
}

// mirrorSummary is the last line of a mirror run.
type mirrorSummary struct {
	Status          string                 `json:"status"`
	Source          string                 `json:"source"`
	Target          string                 `json:"target"`
	Copied          int                    `json:"copied"`
	CopiedSize      int64                  `json:"copiedSize"`
	Skipped         int                    `json:"skipped"`
	Removed         int                    `json:"removed"`
	Failed          int                    `json:"failed"`
	Duration        string                 `json:"duration"`
	DurationSeconds float64                `json:"durationSeconds"`
	DryRun          bool                   `json:"dryRun,omitempty"`
	Error           *cmdutil.JSONErrorBody `json:"error,omitempty"`
}

func (m *mirror) summary(took time.Duration) error {
	s := mirrorSummary{Status: "success", Source: m.src.String(), Target: m.dst.String(), Copied: m.copied,
		CopiedSize: m.bytes, Skipped: m.skipped, Removed: m.removed, Failed: m.failed,
		Duration: took.Round(time.Millisecond).String(), DurationSeconds: took.Seconds(), DryRun: m.f.dryRun}
	if s.Failed > 0 {
		s.Status, s.Error = "error", &cmdutil.JSONErrorBody{Message: fmt.Sprintf("%d objects failed", s.Failed)}
	}
	human := fmt.Sprintf("Mirrored %d object%s (%s) in %s; %d unchanged or filtered out, %d removed, %d failed.",
		s.Copied, plural(int64(s.Copied)), cmdutil.FmtBytes(s.CopiedSize), s.Duration, s.Skipped, s.Removed, s.Failed)
	if err := cmdutil.PrintResult(m.cmd.OutOrStdout(), m.opts, s, human); err != nil {
		return err
	}
	if s.Failed > 0 {
		return cmdutil.ItemsFailed(s.Failed, "objects")
	}
	return nil
}
