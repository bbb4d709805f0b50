package blob

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Drive holds one shard of every blob of a drive set: a directory on a
// local drive (LocalDrive), or another node's drive reached over the node
// API. Every method is safe for concurrent use.
type Drive interface {
	// Create starts a new shard file id; it fails if one exists.
	Create(id string) (ShardWriter, error)
	// Rewrite starts a replacement of shard id (a heal); Commit puts it
	// in place whole, or leaves the old one.
	Rewrite(id string) (ShardWriter, error)
	// Open opens shard id for reading, or returns ErrNotFound.
	Open(id string) (ShardReader, error)
	// Remove deletes shard id durably; a missing shard is not an error.
	Remove(id string) error
	// List returns the blob IDs with a shard in fan-out directory fan
	// (two hex digits), in any order.
	List(fan string) ([]string, error)
	// ReadMark returns the drive's mark, or ErrNotFound on an unmarked
	// drive; WriteMark stores one durably.
	ReadMark() ([]byte, error)
	WriteMark(mark []byte) error
	// String names the drive in errors and logs.
	String() string
}

// ShardWriter is a shard being written. Commit returns once the shard and
// its directory entry are durable; Abort discards it. Exactly one of them
// is called.
type ShardWriter interface {
	io.Writer
	Commit() error
	Abort()
}

// ShardReader reads a committed shard.
type ShardReader interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// LocalDrive is a drive's blob tree, DIR/blobs/xx/ID; a shard drive
// (NewShardDrive) also keeps its small shards in DIR/blobs/small.
type LocalDrive struct {
	root  string
	small *smallStore // nil: every shard is a file

	dirMu     sync.Mutex
	dirSynced map[string]bool
}

// NewLocalDrive prepares the blob tree under dir.
func NewLocalDrive(dir string) (*LocalDrive, error) {
	root := filepath.Join(dir, "blobs")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	return &LocalDrive{root: root, dirSynced: map[string]bool{}}, nil
}

var _ Drive = (*LocalDrive)(nil)

func (d *LocalDrive) String() string { return filepath.Dir(d.root) }

func (d *LocalDrive) path(id string) (string, error) {
	if !validID(id) {
		return "", ErrInvalidID
	}
	return filepath.Join(d.root, id[:2], id), nil
}

// Create implements Drive.
func (d *LocalDrive) Create(id string) (ShardWriter, error) {
	if d.small != nil {
		return d.createSmall(id, false)
	}
	return d.createFile(id)
}

// createFile starts shard id as a file.
func (d *LocalDrive) createFile(id string) (ShardWriter, error) {
	p, err := d.path(id)
	if err != nil {
		return nil, err
	}
	if err := d.ensureDir(filepath.Dir(p)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("blob: create shard on %s: %w", d, err)
	}
	return &localShard{f: f, b: bufio.NewWriterSize(f, 64<<10), final: p}, nil
}

// Rewrite implements Drive: the shard is written beside its place and
// renamed over it on Commit.
func (d *LocalDrive) Rewrite(id string) (ShardWriter, error) {
	if d.small != nil {
		return d.createSmall(id, true)
	}
	return d.rewriteFile(id)
}

// rewriteFile starts the replacement of shard id as a file.
func (d *LocalDrive) rewriteFile(id string) (ShardWriter, error) {
	p, err := d.path(id)
	if err != nil {
		return nil, err
	}
	// Not ensureDir's cache: a drive put in place while serving has lost
	// the directories the cache remembers.
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, fmt.Errorf("blob: rewrite shard on %s: %w", d, err)
	}
	if err := syncDir(d.root); err != nil {
		return nil, err
	}
	// A name of its own: two rewrites of one shard never share a file.
	f, err := os.OpenFile(p+rewriteMark+NewID()[:8], os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("blob: rewrite shard on %s: %w", d, err)
	}
	return &localShard{f: f, b: bufio.NewWriterSize(f, 64<<10), final: p, rename: true}, nil
}

// localShard is a shard file being written.
type localShard struct {
	f      *os.File
	b      *bufio.Writer
	final  string
	rename bool // written beside final, renamed on Commit
}

func (w *localShard) Write(p []byte) (int, error) { return w.b.Write(p) }

func (w *localShard) Commit() error {
	err := w.b.Flush()
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil && w.rename {
		err = os.Rename(w.f.Name(), w.final)
	}
	if err == nil {
		err = syncDir(filepath.Dir(w.final))
	}
	if err != nil {
		os.Remove(w.f.Name())
		return fmt.Errorf("blob: commit shard: %w", err)
	}
	return nil
}

func (w *localShard) Abort() {
	w.f.Close()
	os.Remove(w.f.Name())
}

// Open implements Drive.
func (d *LocalDrive) Open(id string) (ShardReader, error) {
	if d.small != nil {
		if r, err := d.openSmall(id); !errors.Is(err, ErrNotFound) {
			return r, err
		}
	}
	return d.open(id)
}

func (d *LocalDrive) open(id string) (plainFile, error) {
	p, err := d.path(id)
	if err != nil {
		return plainFile{}, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return plainFile{}, fmt.Errorf("%w: %s on %s", ErrNotFound, id, d)
	}
	if err != nil {
		return plainFile{}, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return plainFile{}, err
	}
	return plainFile{f, st.Size()}, nil
}

// Remove implements Drive.
func (d *LocalDrive) Remove(id string) error {
	p, err := d.path(id)
	if err != nil {
		return err
	}
	if d.small != nil {
		if err := d.removeSmall(id); err != nil {
			return err
		}
	}
	return removeFile(p)
}

// removeFile removes a shard file durably; a missing one is not an error.
func removeFile(p string) error {
	err := os.Remove(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return syncDir(filepath.Dir(p))
}

// List implements Drive: a shard in the small store and as a file (a
// rewrite cut short) is listed once.
func (d *LocalDrive) List(fan string) ([]string, error) {
	if len(fan) != 2 || !validHex(fan) {
		return nil, ErrInvalidID
	}
	ids, err := d.listSmall(fan)
	if err != nil {
		return nil, err
	}
	files, err := os.ReadDir(filepath.Join(d.root, fan))
	if errors.Is(err, os.ErrNotExist) {
		return ids, nil
	}
	if err != nil {
		return nil, fmt.Errorf("blob: list %s: %w", d, err)
	}
	small := make(map[string]bool, len(ids))
	for _, id := range ids {
		small[id] = true
	}
	for _, f := range files {
		if f.Type().IsRegular() && validID(f.Name()) && f.Name()[:2] == fan && !small[f.Name()] {
			ids = append(ids, f.Name())
		}
		if strings.Contains(f.Name(), rewriteMark) {
			d.sweepRewrite(filepath.Join(d.root, fan, f.Name()))
		}
	}
	return ids, nil
}

// rewriteMark names a shard's replacement while Rewrite writes it.
const rewriteMark = ".heal-"

// staleRewrite is how long a rewrite's file may go unwritten before it is
// taken for the leftover of a crash: a live rewrite writes every few
// seconds or is given up (a remote one after nodeapi's stall bound).
const staleRewrite = time.Hour

// sweepRewrite removes a rewrite's file that a crash left behind.
func (d *LocalDrive) sweepRewrite(p string) {
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > staleRewrite {
		os.Remove(p)
	}
}

const driveMarkFile = ".drive"

// ReadMark implements Drive.
func (d *LocalDrive) ReadMark() ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(d.root, driveMarkFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	return raw, err
}

// WriteMark implements Drive: written beside its place, fsynced and
// renamed over it, as a shard's rewrite is.
func (d *LocalDrive) WriteMark(mark []byte) error {
	p := filepath.Join(d.root, driveMarkFile)
	f, err := os.OpenFile(p+".tmp", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("blob: mark drive: %w", err)
	}
	w := &localShard{f: f, b: bufio.NewWriter(f), final: p, rename: true}
	if _, err := w.Write(mark); err != nil {
		w.Abort()
		return fmt.Errorf("blob: mark drive: %w", err)
	}
	if err := w.Commit(); err != nil {
		return fmt.Errorf("blob: mark drive: %w", err)
	}
	return nil
}

// ensureDir creates a fan-out directory once and fsyncs its parent, so a
// shard's directory entry survives a crash.
func (d *LocalDrive) ensureDir(dir string) error {
	d.dirMu.Lock()
	defer d.dirMu.Unlock()
	if d.dirSynced[dir] {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return err
	}
	d.dirSynced[dir] = true
	return nil
}
