package objcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// cpFlags are the cp command's flags (and mv's, which sets move).
type cpFlags struct {
	recursive bool
	versionID string
	rewind    string
	attrs     []string
	tags      string
	// olderThan and newerThan pick the sources of a recursive copy by age.
	olderThan, newerThan string
	move                 bool
}

func newCPCmd(opts *cmdutil.Options) *cobra.Command {
	var f cpFlags
	cmd := &cobra.Command{
		Use:   "cp SOURCE TARGET",
		Short: "Copy objects and files: local to remote, remote to local, remote to remote",
		Long: `Copy a local file to an object, an object to a local file, or an object to
another object (server-side when both are on the same alias, streamed through
the client otherwise). An argument is remote when its first path element is a
configured alias; write ./PATH for a local path that starts with an alias name.
A target ending in '/' (or an existing directory) gets the source's base name
appended.

--recursive copies a directory or a prefix. Like rsync, a source ending in '/'
copies what is inside it; without the '/' the last path element is kept.

--attr sets user metadata (x-amz-meta-*) on the copy; Content-Type sets the
content type. A server-side copy keeps the source's metadata and adds --attr.

A source of '-' reads standard input to its end into one object, as pipe does.`,
		Example: `  twinlake cp ./report.pdf site1/docs/
  twinlake cp --attr owner=ana --attr Content-Type=application/pdf ./report.pdf site1/docs/2024.pdf
  twinlake cp site1/docs/2024.pdf ./
  twinlake cp --version-id 3f1c... site1/docs/2024.pdf ./old.pdf
  twinlake cp --recursive --rewind 3d site1/media/photos/ ./photos-3-days-ago
  twinlake cp site1/docs/2024.pdf site1/archive/2024.pdf
  twinlake cp --recursive ./photos site1/media/
  twinlake cp --recursive site1/media/photos/ ./restore
  tar czf - ./logs | twinlake cp - site1/backups/logs.tar.gz`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCP(cmd, opts, args[0], args[1], f)
		},
	}
	cmd.Flags().BoolVarP(&f.recursive, "recursive", "r", false, "copy a directory or every object under a prefix")
	cmd.Flags().StringVar(&f.versionID, "version-id", "", "copy this version of the source object")
	cmd.Flags().StringVar(&f.rewind, "rewind", "", "copy the source objects as they were at this time: a duration back (7d) or a time (2024-05-01)")
	cmd.Flags().StringArrayVar(&f.attrs, "attr", nil, "metadata key=value for the copy (repeatable, or k1=v1;k2=v2)")
	addCopyFilterFlags(cmd, &f)
	return cmd
}

// addCopyFilterFlags adds the flags cp and mv share beyond --recursive and
// --attr: tags for what they write, and the age of what they read.
func addCopyFilterFlags(cmd *cobra.Command, f *cpFlags) {
	cmd.Flags().StringVar(&f.tags, "tags", "", `tags for the objects written, "k1=v1&k2=v2" (a server-side copy replaces the source's)`)
	cmd.Flags().StringVar(&f.olderThan, "older-than", "", "with --recursive: only sources modified longer ago than this (7d, 12h)")
	cmd.Flags().StringVar(&f.newerThan, "newer-than", "", "with --recursive: only sources modified more recently than this (7d, 12h)")
}

func newMVCmd(opts *cmdutil.Options) *cobra.Command {
	f := cpFlags{move: true}
	cmd := &cobra.Command{
		Use:   "mv SOURCE TARGET",
		Short: "Move objects and files: copy each, then remove its source",
		Long: `Move a file or an object as cp copies it (same arguments, same rules for
local and remote paths, server-side on one site), removing each source once
its copy is acknowledged: a failed copy leaves its source in place. On a
versioned bucket the source's removal leaves a delete marker, as rm does.
--recursive moves a directory (its files; the emptied directories stay) or a
prefix.

Moving an object onto itself, or a prefix into a range that overlaps it on the
same bucket, is refused: the copy would be removed with its source.`,
		Example: `  twinlake mv ./report.pdf site1/docs/
  twinlake mv site1/inbox/2024.pdf site1/archive/2024.pdf
  twinlake mv --recursive site1/media/incoming/ site1/archive/media/
  twinlake mv --recursive ./exports site1/backups/`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCP(cmd, opts, args[0], args[1], f)
		},
	}
	cmd.Flags().BoolVarP(&f.recursive, "recursive", "r", false, "move a directory or every object under a prefix")
	cmd.Flags().StringArrayVar(&f.attrs, "attr", nil, "metadata key=value for the copy (repeatable, or k1=v1;k2=v2)")
	addCopyFilterFlags(cmd, &f)
	return cmd
}

// cpEnd is one side of a copy: a local path, or a remote target.
type cpEnd struct {
	local  string
	remote *cmdutil.Target
	alias  cmdutil.Alias
}

// cpResult is one copied object as printed.
type cpResult struct {
	Status    string `json:"status"`
	Source    string `json:"source"`
	Target    string `json:"target"`
	Size      int64  `json:"size"`
	ETag      string `json:"etag,omitempty"`
	VersionID string `json:"versionId,omitempty"`
}

// cpJob carries what every single copy of one cp run needs.
type cpJob struct {
	cmd      *cobra.Command
	opts     *cmdutil.Options
	meta     map[string]string
	ctype    string
	srcC     *minio.Client
	dstC     *minio.Client
	sameSite bool
	move     bool              // mv: remove each source once its copy is acknowledged
	tags     map[string]string // --tags: the tags of every object written
	age      ageFilter         // --older-than, --newer-than: the sources a recursive copy takes
	prog     *cmdutil.Progress // nil: nothing reported
	single   bool              // one object: its size is the progress total
	at       time.Time         // --rewind: copy the versions current then
}

func runCP(cmd *cobra.Command, opts *cmdutil.Options, srcArg, dstArg string, f cpFlags) error {
	if srcArg == "-" {
		if f.move {
			return errors.New("mv: standard input cannot be moved: use cp - TARGET or pipe")
		}
		return runCPStdin(cmd, opts, dstArg, f)
	}
	meta, ctype, err := parseAttrs(f.attrs)
	if err != nil {
		return err
	}
	cfg, err := opts.LoadConfig()
	if err != nil {
		return err
	}
	src, dst := classifyCPArg(cfg, srcArg), classifyCPArg(cfg, dstArg)
	if src.remote == nil && dst.remote == nil {
		return fmt.Errorf("%s needs an ALIAS/BUCKET[/KEY] source or target (no alias named %q or %q)", cmd.Name(),
			cmdutil.ParseTarget(srcArg).Alias, cmdutil.ParseTarget(dstArg).Alias)
	}
	if f.recursive && f.versionID != "" {
		return errors.New("--version-id copies one object version: it cannot be combined with --recursive")
	}
	at, err := rewindFlag(f.rewind)
	if err != nil {
		return err
	}
	if !at.IsZero() && (f.versionID != "" || src.remote == nil) {
		return errors.New("--rewind picks the source versions current at a time: it needs a remote source and no --version-id")
	}
	j := &cpJob{cmd: cmd, opts: opts, meta: meta, ctype: ctype, at: at, move: f.move}
	if (f.olderThan != "" || f.newerThan != "") && !f.recursive {
		return fmt.Errorf("--older-than and --newer-than pick the sources of a recursive %s: add --recursive", cmd.Name())
	}
	if j.age, err = newAgeFilter(f.olderThan, f.newerThan); err != nil {
		return err
	}
	if f.tags != "" && dst.remote == nil {
		return fmt.Errorf("--tags sets the tags of the objects %s writes: it needs an ALIAS/BUCKET target", cmd.Name())
	}
	if j.tags, err = tagsFlag(f.tags); err != nil {
		return err
	}
	for _, e := range []*cpEnd{&src, &dst} {
		if e.remote == nil {
			continue
		}
		if e.remote.Bucket == "" {
			return fmt.Errorf("%q: want ALIAS/BUCKET[/KEY]", cmdutil.FmtTarget(*e.remote))
		}
		c, err := cmdutil.NewS3Client(e.alias, cmdutil.S3ClientConfig{})
		if err != nil {
			return err
		}
		if e == &src {
			j.srcC = c
		} else {
			j.dstC = c
		}
	}
	if src.remote != nil && dst.remote != nil {
		j.sameSite = src.alias.URL == dst.alias.URL && src.alias.AccessKey == dst.alias.AccessKey
		if j.move && src.alias.URL == dst.alias.URL {
			if err := moveOverlap(*src.remote, *dst.remote, f.recursive); err != nil {
				return err
			}
		}
	}
	j.prog = cmdutil.StartProgress(cmd, opts, cmd.Name())
	defer j.prog.Finish()
	if f.recursive {
		return j.copyTree(src, dst)
	}
	return j.copyOne(src, dst, f.versionID)
}

// classifyCPArg reads an argument as remote when its first path element is
// a configured alias, as a local path otherwise.
func classifyCPArg(cfg *cmdutil.ClientConfig, arg string) cpEnd {
	t := cmdutil.ParseTarget(arg)
	if a, ok := cfg.Aliases[t.Alias]; ok && !filepath.IsAbs(arg) {
		return cpEnd{remote: &t, alias: a}
	}
	return cpEnd{local: arg}
}

// tagsFlag reads a --tags value ("k1=v1&k2=v2") as object tags; "" is
// none (nil).
func tagsFlag(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	tg, err := tags.ParseObjectTags(s)
	if err != nil {
		return nil, fmt.Errorf("--tags %q: %w", s, err)
	}
	return tg.ToMap(), nil
}

// parseAttrs splits --attr values into user metadata and a content type.
func parseAttrs(attrs []string) (map[string]string, string, error) {
	meta, ctype := map[string]string{}, ""
	for _, a := range attrs {
		for kv := range strings.SplitSeq(a, ";") {
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, "", fmt.Errorf("--attr %q: want key=value", kv)
			}
			if strings.EqualFold(k, "Content-Type") {
				ctype = v
				continue
			}
			meta[k] = v
		}
	}
	return meta, ctype, nil
}

// copyOne copies a single file or object.
func (j *cpJob) copyOne(src, dst cpEnd, versionID string) error {
	if src.remote == nil {
		st, err := os.Stat(src.local)
		if err != nil {
			return fmt.Errorf("%s: %w", j.cmd.Name(), err)
		}
		if st.IsDir() {
			return fmt.Errorf("%s: %s is a directory (use --recursive)", j.cmd.Name(), src.local)
		}
		j.prog.SetTotal(1, st.Size())
		if err := j.put(src.local, dstKey(*dst.remote, filepath.Base(src.local))); err != nil {
			return err
		}
		return j.removeLocal(src.local)
	}
	if src.remote.Key == "" || strings.HasSuffix(src.remote.Key, "/") {
		return fmt.Errorf("%s: %s is a bucket or prefix (use --recursive)", j.cmd.Name(), cmdutil.FmtTarget(*src.remote))
	}
	base := path.Base(src.remote.Key)
	j.single = true
	if !j.at.IsZero() {
		var err error
		if versionID, err = versionAt(j.cmd.Context(), j.srcC, *src.remote, j.at); err != nil {
			return err
		}
	}
	var err error
	if dst.remote != nil {
		err = j.copyRemote(*src.remote, versionID, dstKey(*dst.remote, base))
	} else {
		p := dst.local
		if st, err := os.Stat(p); (err == nil && st.IsDir()) || strings.HasSuffix(p, string(filepath.Separator)) || strings.HasSuffix(p, "/") {
			p = filepath.Join(p, base)
		}
		err = j.get(*src.remote, versionID, p)
	}
	if err != nil {
		return err
	}
	return j.removeRemote(*src.remote)
}

// dstKey appends base to a target naming a bucket or a "folder/".
func dstKey(t cmdutil.Target, base string) cmdutil.Target {
	if t.Key == "" || strings.HasSuffix(t.Key, "/") {
		t.Key += base
	}
	return t
}

// copyTree copies a local directory or a remote prefix, object by object.
func (j *cpJob) copyTree(src, dst cpEnd) error {
	if dst.remote != nil && dst.remote.Key != "" && !strings.HasSuffix(dst.remote.Key, "/") {
		dst.remote.Key += "/"
	}
	if src.remote == nil {
		j.prog.SetTotal(localTreeSize(src.local))
		return j.putTree(src.local, *dst.remote)
	}
	ctx, cancel := context.WithCancel(j.cmd.Context())
	defer cancel()
	// rsync rule: "photos/" copies what is inside, "photos" keeps the name.
	keep := src.remote.Key
	if !strings.HasSuffix(keep, "/") {
		keep = path.Dir(keep)
		if keep == "." {
			keep = ""
		} else {
			keep += "/"
		}
	}
	for obj, err := range objectsThen(ctx, j.srcC, src.remote.Bucket, src.remote.Key, j.at) {
		if err != nil {
			return cmdutil.S3Err("list "+cmdutil.FmtTarget(*src.remote), err)
		}
		if strings.HasSuffix(obj.Key, "/") || !j.age.keep(obj.LastModified) {
			continue // a folder marker, or outside --older-than/--newer-than
		}
		rel := strings.TrimPrefix(obj.Key, keep)
		from := cmdutil.Target{Alias: src.remote.Alias, Bucket: src.remote.Bucket, Key: obj.Key}
		var err error
		if dst.remote != nil {
			to := *dst.remote
			to.Key += rel
			err = j.copyRemote(from, obj.VersionID, to)
		} else {
			// Keys are opaque: never let one write outside the target directory.
			if !filepath.IsLocal(filepath.FromSlash(rel)) {
				return fmt.Errorf("%s: refusing key %q: it would be written outside %s", j.cmd.Name(), obj.Key, dst.local)
			}
			err = j.get(from, obj.VersionID, filepath.Join(dst.local, filepath.FromSlash(rel)))
		}
		if err != nil {
			return err
		}
		if err := j.removeRemote(from); err != nil {
			return err
		}
	}
	return nil
}

// putTree uploads every regular file under dir.
func (j *cpJob) putTree(dir string, dst cmdutil.Target) error {
	root := filepath.Clean(dir)
	keep := ""
	if !strings.HasSuffix(dir, "/") && !strings.HasSuffix(dir, string(filepath.Separator)) {
		keep = filepath.Base(root) + "/"
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", j.cmd.Name(), err)
		}
		if !d.Type().IsRegular() {
			return nil // directories, and symlinks or devices we do not follow
		}
		if info, err := d.Info(); err != nil || !j.age.keep(info.ModTime()) {
			return nil // gone since listed, or outside --older-than/--newer-than
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		to := dst
		to.Key += keep + filepath.ToSlash(rel)
		if err := j.put(p, to); err != nil {
			return err
		}
		return j.removeLocal(p)
	})
}

// moveOverlap refuses a move on one site whose copies would land on
// objects it moves: an object onto itself, or a prefix into a range that
// overlaps it in the same bucket (each copy would then be removed as a
// source, or listed and moved again).
func moveOverlap(src, dst cmdutil.Target, recursive bool) error {
	if src.Bucket != dst.Bucket {
		return nil
	}
	if !recursive {
		if to := dstKey(dst, path.Base(src.Key)); to.Key == src.Key {
			return fmt.Errorf("mv: %s and %s are the same object", cmdutil.FmtTarget(src), cmdutil.FmtTarget(to))
		}
		return nil
	}
	d := dst.Key
	if d != "" && !strings.HasSuffix(d, "/") {
		d += "/"
	}
	if strings.HasPrefix(d, src.Key) || strings.HasPrefix(src.Key, d) {
		return fmt.Errorf("mv: the target %s overlaps the source %s: move into another prefix or bucket, or cp then rm",
			cmdutil.FmtTarget(dst), cmdutil.FmtTarget(src))
	}
	return nil
}

// removeLocal removes a moved file once its copy is acknowledged.
func (j *cpJob) removeLocal(file string) error {
	if !j.move {
		return nil
	}
	if err := os.Remove(file); err != nil {
		return fmt.Errorf("mv: copied, but the source stays: %w", err)
	}
	return nil
}

// removeRemote removes a moved object (its latest version: a delete
// marker on a versioned bucket) once its copy is acknowledged.
func (j *cpJob) removeRemote(from cmdutil.Target) error {
	if !j.move {
		return nil
	}
	if err := j.srcC.RemoveObject(j.cmd.Context(), from.Bucket, from.Key, minio.RemoveObjectOptions{}); err != nil {
		return cmdutil.S3Err("mv: copied, but the source stays: remove "+cmdutil.FmtTarget(from), err)
	}
	return nil
}

// localTreeSize counts the regular files under dir and their bytes, for
// the progress totals; what cannot be read counts nothing (the copy itself
// reports it).
func localTreeSize(dir string) (files, bytes int64) {
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			files++
			bytes += info.Size()
		}
		return nil
	})
	return files, bytes
}

// put uploads one local file.
func (j *cpJob) put(file string, to cmdutil.Target) error {
	info, err := j.dstC.FPutObject(j.cmd.Context(), to.Bucket, to.Key, file,
		minio.PutObjectOptions{UserMetadata: j.meta, ContentType: j.ctype, UserTags: j.tags, Progress: j.prog.Hook()})
	if err != nil {
		return cmdutil.S3Err("upload "+file+" to "+cmdutil.FmtTarget(to), err)
	}
	return j.report(cpResult{Source: file, Target: cmdutil.FmtTarget(to), Size: info.Size, ETag: info.ETag, VersionID: info.VersionID})
}

// get downloads one object into a temporary file next to p, then renames it
// into place, so a failed download never leaves a truncated file at p.
func (j *cpJob) get(from cmdutil.Target, versionID, p string) error {
	ctx := j.cmd.Context()
	obj, err := j.srcC.GetObject(ctx, from.Bucket, from.Key, minio.GetObjectOptions{VersionID: versionID})
	if err != nil {
		return cmdutil.S3Err("download "+cmdutil.FmtTarget(from), err)
	}
	defer obj.Close()
	info, err := obj.Stat()
	if err != nil {
		return cmdutil.S3Err("download "+cmdutil.FmtTarget(from), err)
	}
	if j.single {
		j.prog.SetTotal(1, info.Size)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("%s: %w", j.cmd.Name(), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*.part")
	if err != nil {
		return fmt.Errorf("%s: %w", j.cmd.Name(), err)
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, j.prog.Reader(obj))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return cmdutil.S3Err("download "+cmdutil.FmtTarget(from), err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("%s: %w", j.cmd.Name(), err)
	}
	return j.report(cpResult{Source: cmdutil.FmtTarget(from), Target: p, Size: n, ETag: strings.Trim(info.ETag, `"`), VersionID: info.VersionID})
}

// copyRemote copies an object: server-side on one site, streamed otherwise.
// The copy keeps the source's content type and user metadata, with --attr
// added on top.
func (j *cpJob) copyRemote(from cmdutil.Target, versionID string, to cmdutil.Target) error {
	ctx := j.cmd.Context()
	if j.sameSite {
		info, err := j.srcC.StatObject(ctx, from.Bucket, from.Key, minio.StatObjectOptions{VersionID: versionID})
		if err != nil {
			return cmdutil.S3Err("copy "+cmdutil.FmtTarget(from), err)
		}
		d := minio.CopyDestOptions{Bucket: to.Bucket, Object: to.Key, ReplaceTags: j.tags != nil, UserTags: j.tags}
		if len(j.meta) > 0 || j.ctype != "" {
			d.ReplaceMetadata = true
			d.UserMetadata = j.mergedMeta(info.UserMetadata)
			d.ContentType = cmp.Or(j.ctype, info.ContentType)
		}
		up, err := j.dstC.CopyObject(ctx, d, minio.CopySrcOptions{Bucket: from.Bucket, Object: from.Key, VersionID: versionID})
		if err != nil {
			return cmdutil.S3Err("copy "+cmdutil.FmtTarget(from)+" to "+cmdutil.FmtTarget(to), err)
		}
		j.prog.AddBytes(info.Size)
		return j.report(cpResult{Source: cmdutil.FmtTarget(from), Target: cmdutil.FmtTarget(to), Size: info.Size, ETag: up.ETag, VersionID: up.VersionID})
	}
	obj, err := j.srcC.GetObject(ctx, from.Bucket, from.Key, minio.GetObjectOptions{VersionID: versionID})
	if err != nil {
		return cmdutil.S3Err("copy "+cmdutil.FmtTarget(from), err)
	}
	defer obj.Close()
	info, err := obj.Stat()
	if err != nil {
		return cmdutil.S3Err("copy "+cmdutil.FmtTarget(from), err)
	}
	if j.single {
		j.prog.SetTotal(1, info.Size)
	}
	up, err := j.dstC.PutObject(ctx, to.Bucket, to.Key, j.prog.Reader(obj), info.Size, minio.PutObjectOptions{
		UserMetadata: j.mergedMeta(info.UserMetadata), ContentType: cmp.Or(j.ctype, info.ContentType), UserTags: j.tags})
	if err != nil {
		return cmdutil.S3Err("copy "+cmdutil.FmtTarget(from)+" to "+cmdutil.FmtTarget(to), err)
	}
	return j.report(cpResult{Source: cmdutil.FmtTarget(from), Target: cmdutil.FmtTarget(to), Size: up.Size, ETag: up.ETag, VersionID: up.VersionID})
}

// mergedMeta is the source's user metadata with --attr on top.
func (j *cpJob) mergedMeta(src minio.StringMap) map[string]string {
	m := map[string]string{}
	maps.Copy(m, src)
	maps.Copy(m, j.meta)
	return m
}

func (j *cpJob) report(r cpResult) error {
	j.prog.ObjectDone()
	j.prog.Clear()
	r.Status = "success"
	r.ETag = strings.Trim(r.ETag, `"`)
	human := fmt.Sprintf("`%s` -> `%s` (%s)", r.Source, r.Target, cmdutil.FmtBytes(r.Size))
	return cmdutil.PrintResult(j.cmd.OutOrStdout(), j.opts, r, human)
}
