// Package blob owns object data on local disk. Each blob is one file named by
// a random ID under the data directory, or, on a set of several drives, one
// erasure-coded shard file of that name on each drive (see drives.go); a
// blob is durable (files and directory entries fsynced) before Commit
// returns, so the metadata that points at it can be committed after. Blob
// IDs are generated here, never taken from a request, so no request can name
// a path outside the data directory.
package blob

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twinlake/twinlake/internal/erasure"
)

// Store keeps blobs under dir/blobs/xx/ID, or their shards on each drive
// of a set (drives.go).
type Store struct {
	one  *LocalDrive   // one drive: its blob files are the blobs
	set  []Drive       // a drive set, in shard order
	code *erasure.Code // a drive set's code
	// names are the drives' places ("0", "1", ...), which shard
	// placement hashes.
	names []string
	// hung marks, by drive, one that left a read's open unanswered past
	// openHedge, until it answers one: reads do not wait for it, nor
	// call it while probing says an open to it is still out.
	mu            sync.Mutex
	hung, probing []bool
	// stuck counts, by drive, the shard commits and removals given up on
	// while still out to it (stuck.go): writes and removals leave a drive
	// out while it has any; skipped is set when one left a drive out.
	stuck   []atomic.Int64
	skipped atomic.Bool
}

// Open prepares the blob tree under dir.
func Open(dir string) (*Store, error) {
	d, err := NewLocalDrive(dir)
	if err != nil {
		return nil, err
	}
	return &Store{one: d}, nil
}

func (s *Store) path(id string) (string, error) { return s.one.path(id) }

// File is a committed blob opened for reading.
type File interface {
	io.Reader
	io.ReaderAt
	io.Closer
	// Size is the blob's length in bytes.
	Size() int64
}

// plainFile is a blob stored as one file.
type plainFile struct {
	*os.File
	size int64
}

func (f plainFile) Size() int64 { return f.size }

// OSFile returns the file a blob stored as one plain file reads from (a
// response writer can then send it with sendfile), or false for a blob
// read back from erasure-coded shards.
func OSFile(f File) (*os.File, bool) {
	p, ok := f.(plainFile)
	return p.File, ok
}

// NewID returns a fresh random blob ID, of data that belongs to no one
// object: 32 hex digits. A drive set places its shards by the ID.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// NewPlacedID returns a fresh blob ID for data of object bucket/key: 48
// hex digits, the object's erasure.KeyHash (16) then 128 random bits
// (32). A drive set places the blob's shards by that hash, so that every
// node finds an object's shards from its bucket and key over the drive
// set alone, and each blob's placement from its ID alone when it heals.
func NewPlacedID(bucket, key string) string {
	var b [24]byte
	binary.BigEndian.PutUint64(b[:8], erasure.KeyHash(bucket, key))
	if _, err := rand.Read(b[8:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// placedHash is the key hash a placed ID (NewPlacedID) carries, or false
// for an ID from NewID.
func placedHash(id string) (uint64, bool) {
	if len(id) != 48 {
		return 0, false
	}
	raw, err := hex.DecodeString(id[:16])
	if err != nil {
		return 0, false
	}
	return binary.BigEndian.Uint64(raw), true
}

func validID(id string) bool { return (len(id) == 32 || len(id) == 48) && validHex(id) }

// validHex reports whether s is lowercase hex digits only, as NewID
// writes them.
func validHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Writer streams one new blob to disk. It is not safe for concurrent use.
type Writer struct {
	s    *Store
	id   string
	f    *os.File
	sh   *shardWriter // on a drive set, instead of f
	n    int64
	done bool
}

// Create starts a new blob under a fresh ID.
func (s *Store) Create() (*Writer, error) { return s.CreateAs(NewID()) }

// CreateAs starts a new blob under id, which must come from NewID or
// NewPlacedID: a caller
// that must record the ID durably before the file exists (an intent) takes
// it first. It fails if a blob with that ID exists.
func (s *Store) CreateAs(id string) (*Writer, error) {
	if s.code != nil {
		sh, err := s.createShards(id)
		if err != nil {
			return nil, err
		}
		return &Writer{s: s, id: id, sh: sh}, nil
	}
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	if err := s.one.ensureDir(filepath.Dir(p)); err != nil {
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
	var n int
	var err error
	if w.sh != nil {
		n, err = w.sh.ew.Write(p)
		err = w.sh.reason(err)
	} else {
		n, err = w.f.Write(p)
	}
	w.n += int64(n)
	return n, err
}

// ReadFrom implements io.ReaderFrom so io.Copy streams through a buffer
// shared between writes instead of one of its own per write.
func (w *Writer) ReadFrom(r io.Reader) (int64, error) {
	var dst io.Writer = w.f
	if w.sh != nil {
		dst = w.sh.ew
	}
	buf := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(buf)
	n, err := io.CopyBuffer(struct{ io.Writer }{dst}, r, *buf)
	w.n += n
	if w.sh != nil {
		err = w.sh.reason(err)
	}
	return n, err
}

// copyBufs are the buffers ReadFrom copies through, of io.Copy's size.
var copyBufs = sync.Pool{New: func() any {
	b := make([]byte, 32<<10)
	return &b
}}

// Size reports the bytes written so far.
func (w *Writer) Size() int64 { return w.n }

// Commit makes the blob durable and returns its ID.
func (w *Writer) Commit() (string, error) {
	w.done = true
	if w.sh != nil {
		if err := w.sh.commit(); err != nil {
			w.s.Remove(w.id)
			return "", err
		}
		return w.id, nil
	}
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
	if w.sh != nil {
		w.sh.abort()
	} else {
		w.f.Close()
	}
	w.s.Remove(w.id)
}

// Open opens a committed blob for reading. On a drive set it reads
// around shards that are missing or corrupt, as long as enough are sound.
func (s *Store) Open(id string) (File, error) {
	if s.code != nil {
		return s.openShards(id)
	}
	return s.one.open(id)
}

// Remove deletes a blob durably: once it returns, the file's directory
// entry (every shard's, on a drive set) is gone from stable storage, so a
// record saying the blob may be removed can be deleted after it. A missing
// blob is not an error.
func (s *Store) Remove(id string) error {
	if s.code != nil {
		return s.removeShards(id)
	}
	return s.one.Remove(id)
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

// listWait bounds how long Walk waits for a drive's list of one of the
// 256 directories (a variable for tests).
var listWait = 10 * time.Second

// errLeftOut is Walk's answer for a drive it did not ask, left out for
// not answering before.
var errLeftOut = errors.New("blob: the drive is left out for not answering")

// Walk calls fn with the ID of every blob present (on a drive set, every
// blob with a shard file on some drive, once), in ID order, until fn
// returns false. Files that are not blobs are skipped. It holds the names
// of one fan-out directory at a time.
func (s *Store) Walk(fn func(id string) bool) error {
	for fan := range 256 {
		name := fmt.Sprintf("%02x", fan)
		var ids []string
		if s.code != nil {
			// A failed drive's shards are healed, not listed; one that
			// does not answer, or was left out for not answering, is
			// not waited for.
			h := s.newHearing()
			lists, errs := valuesWithin(s.set, listWait, nil, 0, func(i int, d Drive) ([]string, error) {
				if s.unanswering(i) {
					return nil, errLeftOut
				}
				got, err := d.List(name)
				if err == nil {
					h.heard(i)
				}
				return got, err
			})
			h.silent(errs)
			for _, got := range lists {
				ids = append(ids, got...)
			}
		} else {
			got, err := s.one.List(name)
			if err != nil {
				return fmt.Errorf("blob: walk: %w", err)
			}
			ids = got
		}
		slices.Sort(ids)
		for _, id := range slices.Compact(ids) {
			if !fn(id) {
				return nil
			}
		}
	}
	return nil
}
