package catalog

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path"
	"time"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/twinlake/twinlake/internal/objects"
)

// ObjectIO lets apache/iceberg-go read manifest lists and manifests from
// the local object layer, read-only: Read returns a whole object by its
// location. The catalog's purge and the replica's scanner both read
// through it.
type ObjectIO struct {
	Ctx  context.Context
	Read func(ctx context.Context, location string) ([]byte, error)
}

var _ iceio.IO = ObjectIO{}

// ErrNotLocation is returned by a Read for a location that names no object.
var ErrNotLocation = errors.New("catalog: not an object location")

// Open implements iceio.IO: a missing object (or bucket) is fs.ErrNotExist.
func (o ObjectIO) Open(name string) (iceio.File, error) {
	data, err := o.Read(o.Ctx, name)
	switch {
	case errors.Is(err, ErrNotLocation):
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	case errors.Is(err, objects.ErrObjectNotFound) || errors.Is(err, objects.ErrBucketNotFound):
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	case err != nil:
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &memFile{Reader: bytes.NewReader(data), name: path.Base(name), size: int64(len(data))}, nil
}

// Remove implements iceio.IO: nothing is removed through it.
func (o ObjectIO) Remove(name string) error {
	return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrPermission}
}

// memFile is a file read whole into memory.
type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *memFile) Close() error { return nil }

func (f *memFile) Stat() (fs.FileInfo, error) { return fileInfo{f.name, f.size}, nil }

type fileInfo struct {
	name string
	size int64
}

func (fi fileInfo) Name() string       { return fi.name }
func (fi fileInfo) Size() int64        { return fi.size }
func (fi fileInfo) Mode() fs.FileMode  { return 0o444 }
func (fi fileInfo) ModTime() time.Time { return time.Time{} }
func (fi fileInfo) IsDir() bool        { return false }
func (fi fileInfo) Sys() any           { return nil }
