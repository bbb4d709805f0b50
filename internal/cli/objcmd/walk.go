package objcmd

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// walkEntry is one object (or object version) or local file found under a
// walk's root, named relative to it; du, tree, find, diff and mirror share
// this view of both sides.
type walkEntry struct {
	Rel          string // slash-separated, relative to the root
	Size         int64
	ETag         string // unquoted; "" for a local file
	ModTime      time.Time
	VersionID    string
	IsLatest     bool
	DeleteMarker bool
	// Full is the entry as a user names it: ALIAS/BUCKET/KEY or a local path.
	Full string
	// file is the local path; "" for an object.
	file string
}

// walkRoot is where a walk starts: a local directory or a remote prefix.
type walkRoot struct {
	end    cpEnd
	client *minio.Client
	// prefix is the remote key prefix, "" or ending in '/'.
	prefix string
}

// openWalkRoot resolves arg as a local directory or ALIAS/BUCKET[/PREFIX];
// a remote prefix is read as a folder ("photos" means "photos/").
func openWalkRoot(opts *cmdutil.Options, arg string) (walkRoot, error) {
	cfg, err := opts.LoadConfig()
	if err != nil {
		return walkRoot{}, err
	}
	end := classifyCPArg(cfg, arg)
	r := walkRoot{end: end}
	if end.remote == nil {
		st, err := os.Stat(end.local)
		if err != nil {
			return r, err
		}
		if !st.IsDir() {
			return r, fmt.Errorf("%s is not a directory", end.local)
		}
		return r, nil
	}
	if end.remote.Bucket == "" {
		return r, fmt.Errorf("%q: want ALIAS/BUCKET[/PREFIX]", arg)
	}
	if r.client, err = cmdutil.NewS3Client(end.alias, cmdutil.S3ClientConfig{}); err != nil {
		return r, err
	}
	if k := end.remote.Key; k != "" && !strings.HasSuffix(k, "/") {
		r.prefix = k + "/"
	} else {
		r.prefix = k
	}
	return r, nil
}

// String names the root as the user would.
func (r walkRoot) String() string {
	if r.end.remote == nil {
		return r.end.local
	}
	t := *r.end.remote
	t.Key = r.prefix
	return cmdutil.FmtTarget(t)
}

// join names rel under the root.
func (r walkRoot) join(rel string) string {
	if r.end.remote == nil {
		return filepath.Join(r.end.local, filepath.FromSlash(rel))
	}
	return strings.TrimSuffix(r.String(), "/") + "/" + rel
}

// target is the object rel names under a remote root.
func (r walkRoot) target(rel string) cmdutil.Target {
	t := *r.end.remote
	t.Key = r.prefix + rel
	return t
}

// walk calls fn for every entry under the root, objects in key order;
// versions lists every version and delete marker of remote objects.
// fn's error stops the walk and is returned.
func (r walkRoot) walk(ctx context.Context, versions bool, fn func(walkEntry) error) error {
	if r.end.remote == nil {
		return r.walkLocal(fn)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lo := minio.ListObjectsOptions{Prefix: r.prefix, Recursive: true, WithVersions: versions}
	for obj := range r.client.ListObjectsIter(ctx, r.end.remote.Bucket, lo) {
		if obj.Err != nil {
			if errors.Is(obj.Err, io.EOF) {
				break
			}
			return cmdutil.S3Err("list "+r.String(), obj.Err)
		}
		if strings.HasSuffix(obj.Key, "/") && obj.Size == 0 {
			continue // folder marker
		}
		if err := fn(r.entryOf(obj)); err != nil {
			return err
		}
	}
	return nil
}

// entryOf is a listed object as a walk entry.
func (r walkRoot) entryOf(obj minio.ObjectInfo) walkEntry {
	rel := strings.TrimPrefix(obj.Key, r.prefix)
	return walkEntry{Rel: rel, Size: obj.Size, ETag: strings.Trim(obj.ETag, `"`), ModTime: obj.LastModified,
		VersionID: obj.VersionID, IsLatest: obj.IsLatest, DeleteMarker: obj.IsDeleteMarker, Full: r.join(rel)}
}

// walkAt walks the root's objects as they were at at (the latest ones when
// at is zero): for each key the version current then, folder markers and
// keys deleted then left out.
func (r walkRoot) walkAt(ctx context.Context, at time.Time, fn func(walkEntry) error) error {
	if at.IsZero() || r.end.remote == nil {
		return r.walk(ctx, false, fn)
	}
	for obj, err := range objectsAt(ctx, r.client, r.end.remote.Bucket, r.prefix, at, false) {
		if err != nil {
			return cmdutil.S3Err("list "+r.String(), err)
		}
		if strings.HasSuffix(obj.Key, "/") && obj.Size == 0 {
			continue // folder marker
		}
		if err := fn(r.entryOf(obj)); err != nil {
			return err
		}
	}
	return nil
}

func (r walkRoot) walkLocal(fn func(walkEntry) error) error {
	root := filepath.Clean(r.end.local)
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil // directories, and symlinks or devices we do not follow
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		return fn(walkEntry{Rel: filepath.ToSlash(rel), Size: info.Size(), ModTime: info.ModTime(), Full: p, file: p})
	})
}

// collect walks the root's latest objects (or files) into a map by Rel.
func (r walkRoot) collect(ctx context.Context) (map[string]walkEntry, error) {
	m := map[string]walkEntry{}
	err := r.walk(ctx, false, func(e walkEntry) error {
		m[e.Rel] = e
		return nil
	})
	return m, err
}

// sameContent reports whether a and b hold the same bytes, as far as sizes
// and ETags tell: two objects by size and ETag; a file and an object by the
// file's MD5 (or multipart ETag) against the object's ETag. Two local files
// are never compared (mirror and diff need one remote side).
func sameContent(a, b walkEntry) (bool, error) {
	if a.Size != b.Size {
		return false, nil
	}
	switch {
	case a.file == "" && b.file == "":
		return a.ETag == b.ETag, nil
	case a.file != "" && b.file == "":
		return fileMatchesETag(a.file, a.Size, b.ETag)
	case a.file == "" && b.file != "":
		return fileMatchesETag(b.file, b.Size, a.ETag)
	}
	return false, nil
}

// sourceETagMeta is the user metadata mirror stamps on a copy of a
// multipart object: a copy's ETag need not equal its source's (a
// server-side copy has a single-part ETag), so this is how a re-run knows
// the copy is already done.
const sourceETagMeta = "Twinlake-Source-Etag"

// sameObject is sameContent, then, for two objects whose ETags differ
// because one is multipart, whether either was mirrored from the other.
func sameObject(ctx context.Context, src, dst walkRoot, from, to walkEntry) (bool, error) {
	same, err := sameContent(from, to)
	if same || err != nil || from.file != "" || to.file != "" || from.Size != to.Size ||
		!strings.Contains(from.ETag+to.ETag, "-") {
		return same, err
	}
	for _, side := range []struct {
		root       walkRoot
		copy, orig walkEntry
	}{{dst, to, from}, {src, from, to}} {
		t := side.root.target(side.copy.Rel)
		info, err := side.root.client.StatObject(ctx, t.Bucket, t.Key, minio.StatObjectOptions{})
		if err != nil {
			return false, cmdutil.S3Err("stat "+side.copy.Full, err)
		}
		if info.UserMetadata[sourceETagMeta] == side.orig.ETag {
			return true, nil
		}
	}
	return false, nil
}

// fileMatchesETag compares a file with an S3 ETag: a plain MD5, or a
// multipart ETag ("md5-of-part-md5s-N") tried with the part sizes an
// uploader would have used for N parts (minio-go's 16MiB, or the smallest
// whole MiB that gives N parts).
func fileMatchesETag(file string, size int64, etag string) (bool, error) {
	md5hex, parts, multipart := strings.Cut(etag, "-")
	if !multipart {
		sum, err := fileMD5(file, 0, size)
		return sum == md5hex, err
	}
	n, err := strconv.ParseInt(parts, 10, 64)
	if err != nil || n < 1 {
		return false, nil
	}
	for _, ps := range multipartSizes(size, n) {
		var all []byte
		for off := int64(0); off < size; off += ps {
			sum, err := fileMD5(file, off, min(ps, size-off))
			if err != nil {
				return false, err
			}
			b, _ := hex.DecodeString(sum)
			all = append(all, b...)
		}
		got := md5.Sum(all)
		if hex.EncodeToString(got[:]) == md5hex {
			return true, nil
		}
	}
	return false, nil
}

// multipartSizes are the part sizes that split size into exactly n parts.
func multipartSizes(size, n int64) []int64 {
	var out []int64
	for _, ps := range []int64{16 << 20, ((size+n-1)/n + 1<<20 - 1) / (1 << 20) * (1 << 20)} {
		if ps > 0 && (size+ps-1)/ps == n && (len(out) == 0 || out[0] != ps) {
			out = append(out, ps)
		}
	}
	return out
}

func fileMD5(file string, off, n int64) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, off, n)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// syncWriter serializes writes from parallel workers; each printed result
// is one Write, so lines never interleave.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// parseAge parses an age as mc does: a Go duration that may also use d
// (days) and w (weeks), like "7d", "1w2d" or "36h".
func parseAge(s string) (time.Duration, error) {
	var total time.Duration
	rest := strings.TrimSpace(s)
	if rest == "" {
		return 0, fmt.Errorf("age %q: want a duration like 7d, 12h or 1w2d", s)
	}
	for rest != "" {
		i := strings.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if i <= 0 {
			return 0, fmt.Errorf("age %q: want a duration like 7d, 12h or 1w2d", s)
		}
		j := i + strings.IndexFunc(rest[i:], func(r rune) bool { return (r >= '0' && r <= '9') || r == '.' })
		if j < i {
			j = len(rest)
		}
		num, unit := rest[:i], rest[i:j]
		rest = rest[j:]
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, fmt.Errorf("age %q: %w", s, err)
		}
		switch unit {
		case "d":
			total += time.Duration(v * float64(24*time.Hour))
		case "w":
			total += time.Duration(v * float64(7*24*time.Hour))
		default:
			d, err := time.ParseDuration(num + unit)
			if err != nil {
				return 0, fmt.Errorf("age %q: unknown unit %q (use s, m, h, d, w)", s, unit)
			}
			total += d
		}
	}
	return total, nil
}

// ageFilter keeps entries by age, as --older-than and --newer-than do.
type ageFilter struct {
	olderThan, newerThan time.Duration
	now                  time.Time
}

func newAgeFilter(older, newer string) (ageFilter, error) {
	f := ageFilter{now: time.Now()}
	var err error
	if older != "" {
		if f.olderThan, err = parseAge(older); err != nil {
			return f, fmt.Errorf("--older-than: %w", err)
		}
	}
	if newer != "" {
		if f.newerThan, err = parseAge(newer); err != nil {
			return f, fmt.Errorf("--newer-than: %w", err)
		}
	}
	return f, nil
}

// keep reports whether an entry last modified at t passes the filter.
func (f ageFilter) keep(t time.Time) bool {
	age := f.now.Sub(t)
	if f.olderThan > 0 && age < f.olderThan {
		return false
	}
	if f.newerThan > 0 && age > f.newerThan {
		return false
	}
	return true
}
