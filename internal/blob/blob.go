// Package blob owns object data on local disk. Each blob is one file named by
// a random ID under the data directory; a blob is durable (file and directory
// entry fsynced) before Commit returns, so the metadata that points at it can
// be committed after. Blob IDs are generated here, never taken from a
// request, so no request can name a path outside the data directory.
package blob

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Store keeps blobs under dir/blobs/xx/ID.
type Store struct {
	root string

	dirMu     sync.Mutex
	dirSynced map[string]bool
}

// Open prepares the blob tree under dir.
func Open(dir string) (*Store, error) {
	root := filepath.Join(dir, "blobs")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	return &Store{root: root, dirSynced: map[string]bool{}}, nil
}

// NewID returns a fresh random blob ID.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b[:])
}

func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

func (s *Store) path(id string) (string, error) {
	if !validID(id) {
		return "", ErrInvalidID
	}
	return filepath.Join(s.root, id[:2], id), nil
}

// Writer streams one new blob to disk. It is not safe for concurrent use.
type Writer struct {
	s    *Store
	id   string
	f    *os.File
	n    int64
	done bool
}

// Create starts a new blob under a fresh ID.
func (s *Store) Create() (*Writer, error) { return s.CreateAs(NewID()) }

// CreateAs starts a new blob under id, which must come from NewID: a caller
// that must record the ID durably before the file exists (an intent) takes
// it first. It fails if a blob with that ID exists.
func (s *Store) CreateAs(id string) (*Writer, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	if err := s.ensureDir(filepath.Dir(p)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("blob: create: %w", err)
	}
	return &Writer{s: s, id: id, f: f}, nil
}

// Write implements io.Writer.
func (w *Writer) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.n += int64(n)
	return n, err
}

// ReadFrom implements io.ReaderFrom so io.Copy streams without an extra buffer.
func (w *Writer) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.Copy(struct{ io.Writer }{w.f}, r)
	w.n += n
	return n, err
}

// Size reports the bytes written so far.
func (w *Writer) Size() int64 { return w.n }

// Commit makes the blob durable and returns its ID.
func (w *Writer) Commit() (string, error) {
	w.done = true
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		w.s.Remove(w.id)
		return "", fmt.Errorf("blob: fsync: %w", err)
	}
	if err := w.f.Close(); err != nil {
		w.s.Remove(w.id)
		return "", fmt.Errorf("blob: close: %w", err)
	}
	p, _ := w.s.path(w.id)
	if err := syncDir(filepath.Dir(p)); err != nil {
		w.s.Remove(w.id)
		return "", err
	}
	return w.id, nil
}

// Abort discards an uncommitted blob. It is a no-op after Commit.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.f.Close()
	w.s.Remove(w.id)
}

// Open opens a committed blob for reading.
func (s *Store) Open(id string) (*os.File, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return f, err
}

// Remove deletes a blob durably: once it returns, the file's directory
// entry is gone from stable storage, so a record saying the blob may be
// removed can be deleted after it. A missing blob is not an error.
func (s *Store) Remove(id string) error {
	p, err := s.path(id)
	if err != nil {
		return err
	}
	err = os.Remove(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return syncDir(filepath.Dir(p))
}

// ensureDir creates a fan-out directory once and fsyncs its parent, so a
// blob's directory entry survives a crash.
func (s *Store) ensureDir(dir string) error {
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	if s.dirSynced[dir] {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return err
	}
	s.dirSynced[dir] = true
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("blob: open dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("blob: fsync dir: %w", err)
	}
	return nil
}

// Walk calls fn with the ID of every blob file present, until fn returns
// false. Files that are not blobs are skipped.
func (s *Store) Walk(fn func(id string) bool) error {
	dirs, err := os.ReadDir(s.root)
	if err != nil {
		return fmt.Errorf("blob: walk: %w", err)
	}
	for _, d := range dirs {
		if !d.IsDir() || len(d.Name()) != 2 {
			continue
		}
		files, err := os.ReadDir(filepath.Join(s.root, d.Name()))
		if err != nil {
			return fmt.Errorf("blob: walk: %w", err)
		}
		for _, f := range files {
			if f.Type().IsRegular() && validID(f.Name()) && f.Name()[:2] == d.Name() && !fn(f.Name()) {
				return nil
			}
		}
	}
	return nil
}
