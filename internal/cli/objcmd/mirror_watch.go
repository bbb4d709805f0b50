package objcmd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/trace"
)

// watchedAPIs are the S3 calls that change an object's latest version; a
// successful one under the source makes --watch mirror that key again.
var watchedAPIs = map[string]bool{
	"s3.PutObject": true, "s3.CopyObject": true, "s3.CompleteMultipartUpload": true,
	"s3.DeleteObject": true, "s3.PutObjectTagging": true, "s3.DeleteObjectTagging": true,
}

// watch follows the source site's live trace after the first pass and
// mirrors each key as a client changes it there: the cost is the changes,
// not the namespace. A multi-object delete names no keys in the trace, so it
// makes one whole pass again. It runs until interrupted.
func (m *mirror) watch(ctx context.Context) error {
	src := m.src.end.remote
	m.job.prog = nil // the first pass's report is done; changes print as they come
	adm, err := m.opts.AdminClient(src.Alias)
	if err != nil {
		return err
	}
	stream, err := adm.Trace(ctx, adminclient.TraceOptions{Types: trace.S3})
	if err != nil {
		return fmt.Errorf("mirror --watch follows %s's trace (it needs admin:ServerTrace): %w", src.Alias, err)
	}
	defer stream.Close()
	fmt.Fprintf(m.cmd.ErrOrStderr(), "mirror: watching %s for changes (interrupt to stop) ...\n", m.src)
	bucketPath := "/" + src.Bucket + "/"
	for stream.Next() {
		ev := stream.Event()
		if ev.StatusCode < 200 || ev.StatusCode > 299 || !strings.HasPrefix(ev.Path, bucketPath) {
			continue
		}
		key := strings.TrimPrefix(ev.Path, bucketPath)
		switch {
		case ev.FuncName == "s3.DeleteObjects" && key == "":
			if err := m.run(); err != nil && !errors.Is(err, cmdutil.ErrItemsFailed) {
				return err
			}
		case watchedAPIs[ev.FuncName] && strings.HasPrefix(key, m.src.prefix):
			m.syncKey(ctx, strings.TrimPrefix(key, m.src.prefix))
		}
	}
	if ctx.Err() != nil {
		return nil // interrupted: the normal end of a watch
	}
	return fmt.Errorf("mirror --watch: the trace of %s ended: %w", src.Alias, stream.Err())
}

// syncKey mirrors one name as the source has it now: copies it when it is
// new or changed, removes it from the target (with --remove) when the
// source no longer has it.
func (m *mirror) syncKey(ctx context.Context, rel string) {
	if excluded(rel, m.f.exclude) {
		return
	}
	from, ok, err := m.src.entry(ctx, rel)
	if err != nil {
		cmdutil.PrintItemErr(m.cmd, m.opts, err)
		return
	}
	to, exists, err := m.dst.entry(ctx, rel)
	if err != nil {
		cmdutil.PrintItemErr(m.cmd, m.opts, err)
		return
	}
	switch {
	case !ok && exists && m.f.remove:
		m.do(mirrorOp{rel: rel, remove: true}, from, to)
	case ok && m.age.keep(from.ModTime):
		m.do(mirrorOp{rel: rel, exists: exists}, from, to)
	}
}

// entry reads one name under the root: false when it is not there.
func (r walkRoot) entry(ctx context.Context, rel string) (walkEntry, bool, error) {
	if r.end.remote == nil {
		p := filepath.Join(r.end.local, filepath.FromSlash(rel))
		info, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			return walkEntry{}, false, nil
		}
		if err != nil || !info.Mode().IsRegular() {
			return walkEntry{}, false, err
		}
		return walkEntry{Rel: rel, Size: info.Size(), ModTime: info.ModTime(), Full: p, file: p}, true, nil
	}
	t := r.target(rel)
	info, err := r.client.StatObject(ctx, t.Bucket, t.Key, minio.StatObjectOptions{})
	if code := cmdutil.S3Code(err); code == "NoSuchKey" || code == "NotFound" {
		return walkEntry{}, false, nil
	}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return walkEntry{}, false, cmdutil.S3Err("stat "+r.join(rel), err)
		}
		// A HEAD of a delete marker answers 404 without a code.
		if minio.ToErrorResponse(err).StatusCode == 404 {
			return walkEntry{}, false, nil
		}
		return walkEntry{}, false, cmdutil.S3Err("stat "+r.join(rel), err)
	}
	return walkEntry{Rel: rel, Size: info.Size, ETag: strings.Trim(info.ETag, `"`), ModTime: info.LastModified,
		VersionID: info.VersionID, IsLatest: true, Full: r.join(rel)}, true, nil
}
