package objects

import (
	"context"
	"sort"
	"strings"

	"github.com/twinlake/twinlake/internal/meta"
)

// ListOptions select a page of keys.
type ListOptions struct {
	Prefix    string
	Delimiter string
	// After lists keys strictly greater than it (marker, start-after or a
	// decoded continuation token).
	After   string
	MaxKeys int
}

// ObjectInfo is one listed object (the latest, live version of a key).
type ObjectInfo struct {
	Key       string
	VersionID string
	ModTime   int64
	Size      int64
	ETag      string
	Listed
}

// ListResult is one page of a listing.
type ListResult struct {
	Objects        []ObjectInfo
	CommonPrefixes []string
	IsTruncated    bool
	// NextAfter is where the next page starts (the last key or common prefix
	// returned), set when IsTruncated.
	NextAfter string
}

// pager accumulates a page under max-keys, rolling keys into common prefixes.
type pager struct {
	opts   ListOptions
	count  int
	lastCP string
	res    ListResult
}

// commonPrefix returns the common prefix key rolls into, or "".
func (p *pager) commonPrefix(key string) string {
	if p.opts.Delimiter == "" {
		return ""
	}
	rest := key[len(p.opts.Prefix):]
	if i := strings.Index(rest, p.opts.Delimiter); i >= 0 {
		return p.opts.Prefix + rest[:i+len(p.opts.Delimiter)]
	}
	return ""
}

// full reports whether the page holds max-keys entries; the caller then
// marks it truncated if anything follows.
func (p *pager) full() bool { return p.count >= p.opts.MaxKeys }

func (p *pager) addPrefix(cp string) {
	p.res.CommonPrefixes = append(p.res.CommonPrefixes, cp)
	p.lastCP = cp
	p.count++
	p.res.NextAfter = cp
}

// startKey is the first user key a listing may return, given After.
func startKey(opts ListOptions) (after string, skipPrefix bool) {
	if opts.After == "" || opts.After < opts.Prefix {
		return "", false
	}
	// Resuming after a common prefix must skip every key inside it.
	skip := opts.Delimiter != "" && strings.HasSuffix(opts.After, opts.Delimiter) &&
		strings.HasPrefix(opts.After, opts.Prefix) && strings.Contains(opts.After[len(opts.Prefix):], opts.Delimiter)
	return opts.After, skip
}

// ListObjects lists the live objects of a bucket in key order.
func (l *Layer) ListObjects(ctx context.Context, bucket string, opts ListOptions) (ListResult, error) {
	if _, err := l.Bucket(ctx, bucket); err != nil {
		return ListResult{}, err
	}
	if opts.MaxKeys <= 0 {
		return ListResult{}, nil
	}
	base := latestPrefix(bucket)
	lower := append(append([]byte(nil), base...), opts.Prefix...)
	upper := meta.PrefixEnd(lower)
	it, err := l.meta.Iter(lower, upper)
	if err != nil {
		return ListResult{}, err
	}
	defer it.Close()
	p := &pager{opts: opts}
	ok := it.First()
	if after, skip := startKey(opts); after != "" {
		seek := append(append([]byte(nil), base...), after...)
		if skip {
			seek = meta.PrefixEnd(seek)
		} else {
			seek = append(seek, 0)
		}
		ok = it.SeekGE(seek)
	}
	for ok {
		key := string(it.Key()[len(base):])
		var s latest
		if err := decode(it.Value(), &s); err != nil {
			return ListResult{}, err
		}
		if s.DeleteMarker {
			ok = it.Next()
			continue
		}
		if p.full() {
			p.res.IsTruncated = true
			break
		}
		if cp := p.commonPrefix(key); cp != "" {
			p.addPrefix(cp)
			ok = it.SeekGE(meta.PrefixEnd(append(append([]byte(nil), base...), cp...)))
			continue
		}
		p.res.Objects = append(p.res.Objects, ObjectInfo{Key: key, VersionID: s.VersionID, ModTime: s.ModTime, Size: s.Size, ETag: s.ETag,
			Listed: s.Listed})
		p.count++
		p.res.NextAfter = key
		ok = it.Next()
	}
	if !p.res.IsTruncated {
		p.res.NextAfter = ""
	}
	return p.res, nil
}

// VersionInfo is one listed version or delete marker.
type VersionInfo struct {
	Key          string
	VersionID    string
	IsLatest     bool
	DeleteMarker bool
	ModTime      int64
	Size         int64
	ETag         string
	Listed
}

// VersionListOptions select a page of versions.
type VersionListOptions struct {
	Prefix          string
	Delimiter       string
	KeyMarker       string
	VersionIDMarker string
	MaxKeys         int
}

// VersionListResult is one page of ListObjectVersions.
type VersionListResult struct {
	Versions            []VersionInfo
	CommonPrefixes      []string
	IsTruncated         bool
	NextKeyMarker       string
	NextVersionIDMarker string
}

// ListObjectVersions lists every version of every key, keys ascending and
// each key's versions newest first.
func (l *Layer) ListObjectVersions(ctx context.Context, bucket string, opts VersionListOptions) (VersionListResult, error) {
	if _, err := l.Bucket(ctx, bucket); err != nil {
		return VersionListResult{}, err
	}
	var res VersionListResult
	if opts.MaxKeys <= 0 {
		return res, nil
	}
	p := &pager{opts: ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter, MaxKeys: opts.MaxKeys}}
	vb := versionBucketPrefix(bucket)
	lower := escapeKey(append([]byte(nil), vb...), opts.Prefix)
	if opts.KeyMarker != "" && opts.KeyMarker >= opts.Prefix {
		lower = escapeKey(append([]byte(nil), vb...), opts.KeyMarker)
	}
	upper := meta.PrefixEnd(escapeKey(append([]byte(nil), vb...), opts.Prefix))
	var group []*Version
	var groupKey string
	flush := func() bool {
		if len(group) == 0 {
			return true
		}
		more := l.emitVersions(&res, p, opts, groupKey, group)
		group = group[:0]
		return more
	}
	it, err := l.meta.Iter(lower, upper)
	if err != nil {
		return VersionListResult{}, err
	}
	closed := false
	defer func() {
		if !closed {
			it.Close()
		}
	}()
	for ok := it.First(); ok; {
		key, _, valid := splitVersionKey(bucket, it.Key())
		if !valid || !strings.HasPrefix(key, opts.Prefix) {
			ok = it.Next()
			continue
		}
		if key != groupKey {
			if !flush() {
				break
			}
			groupKey = key
			// A key under a common prefix stands for the whole prefix:
			// it is listed (or skipped) once, and the listing goes on
			// past every version of every key under it, unread.
			if cp := p.commonPrefix(key); cp != "" {
				if !l.emitVersions(&res, p, opts, key, nil) {
					break
				}
				groupKey = ""
				ok = it.SeekGE(meta.PrefixEnd(escapeKey(append([]byte(nil), vb...), cp)))
				continue
			}
		}
		v := &Version{}
		if err := decode(it.Value(), v); err != nil {
			return VersionListResult{}, err
		}
		group = append(group, v)
		ok = it.Next()
	}
	closed = true
	if err := it.Close(); err != nil {
		return VersionListResult{}, err
	}
	flush()
	res.CommonPrefixes = p.res.CommonPrefixes
	return res, nil
}

// emitVersions adds one key's versions to the page; it returns false once
// the page is full.
func (l *Layer) emitVersions(res *VersionListResult, p *pager, opts VersionListOptions, key string, vs []*Version) bool {
	if res.IsTruncated {
		return false
	}
	if opts.KeyMarker != "" && (key < opts.KeyMarker || key == opts.KeyMarker && opts.VersionIDMarker == "") {
		return true
	}
	if cp := p.commonPrefix(key); cp != "" {
		if cp == p.lastCP || (opts.KeyMarker != "" && strings.HasPrefix(opts.KeyMarker, cp)) {
			return true
		}
		if p.full() {
			res.IsTruncated = true
			return false
		}
		p.addPrefix(cp)
		res.NextKeyMarker, res.NextVersionIDMarker = cp, ""
		return true
	}
	sort.Slice(vs, func(i, j int) bool { return newer(vs[i], vs[j]) })
	skipping := key == opts.KeyMarker && opts.VersionIDMarker != ""
	for i, v := range vs {
		if skipping {
			if v.VersionID == opts.VersionIDMarker {
				skipping = false
			}
			continue
		}
		if p.full() {
			res.IsTruncated = true
			return false
		}
		res.Versions = append(res.Versions, VersionInfo{
			Key: key, VersionID: v.VersionID, IsLatest: i == 0, DeleteMarker: v.DeleteMarker,
			ModTime: v.ModTime, Size: v.Size, ETag: v.ETag, Listed: v.Listed(),
		})
		p.count++
		res.NextKeyMarker, res.NextVersionIDMarker = key, v.VersionID
	}
	return true
}
