package objcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// rewindHelp is the --rewind flag's usage, shared by every command that
// reads objects as they were.
const rewindHelp = "read objects as they were at this time: a duration back from now (7d, 12h) or a time (2024-05-01, RFC 3339)"

// errNotThen reports a key that had no object at the rewind time (none yet,
// or a delete marker was current).
var errNotThen = errors.New("no such object at that time")

// parseRewind reads a --rewind value: a duration back from now, or a date
// or RFC 3339 time.
func parseRewind(s string, now time.Time) (time.Time, error) {
	if d, err := parseAge(s); err == nil {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			if t.After(now) {
				return time.Time{}, fmt.Errorf("--rewind %q: the time is in the future", s)
			}
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--rewind %q: want a duration back from now (7d, 12h) or a time (2024-05-01, 2024-05-01T10:00:00Z)", s)
}

// rewindFlag resolves --rewind when set; the zero time means "now".
func rewindFlag(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return parseRewind(s, time.Now())
}

// versionAt returns the ID of the version of t's key that was current at
// at: the newest one modified no later than at. errNotThen when there was
// none or it was a delete marker.
func versionAt(ctx context.Context, c *minio.Client, t cmdutil.Target, at time.Time) (string, error) {
	for obj, err := range objectsAt(ctx, c, t.Bucket, t.Key, at, true) {
		if err != nil {
			return "", cmdutil.S3Err("list versions of "+cmdutil.FmtTarget(t), err)
		}
		if obj.Key == t.Key {
			return obj.VersionID, nil
		}
	}
	return "", fmt.Errorf("%s at %s: %w", cmdutil.FmtTarget(t), at.UTC().Format(time.RFC3339), errNotThen)
}

// objectsThen iterates the objects under prefix (every depth): the
// current ones when at is zero (VersionID empty: the latest, whatever it
// is when read), else those of objectsAt (VersionID set).
func objectsThen(ctx context.Context, c *minio.Client, bucket, prefix string, at time.Time) iter.Seq2[minio.ObjectInfo, error] {
	if !at.IsZero() {
		return objectsAt(ctx, c, bucket, prefix, at, false)
	}
	return func(yield func(minio.ObjectInfo, error) bool) {
		for obj := range c.ListObjectsIter(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
			if obj.Err != nil {
				yield(obj, obj.Err)
				return
			}
			obj.VersionID = ""
			if !yield(obj, nil) {
				return
			}
		}
	}
}

// objectsAt iterates the objects under prefix (every depth) as they were at
// at: for each key the newest version modified no later than at, leaving
// out keys whose version then was a delete marker. With exact, only the key
// equal to prefix is read. Listings give a key's versions newest first,
// so one pass decides each key.
func objectsAt(ctx context.Context, c *minio.Client, bucket, prefix string, at time.Time, exact bool) iter.Seq2[minio.ObjectInfo, error] {
	return func(yield func(minio.ObjectInfo, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		lo := minio.ListObjectsOptions{Prefix: prefix, Recursive: true, WithVersions: true}
		decided := ""
		for obj := range c.ListObjectsIter(ctx, bucket, lo) {
			if obj.Err != nil {
				if !errors.Is(obj.Err, io.EOF) {
					yield(minio.ObjectInfo{}, obj.Err)
				}
				return
			}
			if exact && obj.Key != prefix {
				if obj.Key > prefix {
					return
				}
				continue
			}
			if obj.Key == decided || obj.LastModified.After(at) {
				continue
			}
			decided = obj.Key
			if obj.IsDeleteMarker {
				continue
			}
			obj.IsLatest = true // it was, then
			if !yield(obj, nil) {
				return
			}
		}
	}
}

// folderOf returns the first folder level of key below the listed folder
// ("a/" for "a/b/c" under ""), or "" for a key directly in it.
func folderOf(key, folder string) string {
	rest := strings.TrimPrefix(key, folder)
	if i := strings.Index(rest, "/"); i >= 0 {
		return folder + rest[:i+1]
	}
	return ""
}
