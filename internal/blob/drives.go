package blob

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/twinlake/twinlake/internal/erasure"
)

// MaxDrives bounds a drive set.
const MaxDrives = erasure.MaxNodes

// OpenDrives prepares the blob tree on each of drives. One drive keeps
// each blob as a plain file, as Open does. Two or more erasure-code each
// blob across them, one shard file per drive, in the layout
// erasure.ForNodes gives for that many (blockSize 0 for the default): a
// read survives as many lost or corrupt shards as the layout's parity, and
// a write is acknowledged once its write quorum of shards is durable. The
// order of drives is the shard order and must not change once blobs are
// written: the caller keeps it (see app's drive-set record).
func OpenDrives(drives []string, blockSize int) (*Store, error) {
	if len(drives) < 1 || len(drives) > MaxDrives {
		return nil, fmt.Errorf("blob: %d drives: want 1 to %d", len(drives), MaxDrives)
	}
	s := &Store{dirSynced: map[string]bool{}}
	for _, d := range drives {
		root := filepath.Join(d, "blobs")
		if err := os.MkdirAll(root, 0o700); err != nil {
			return nil, fmt.Errorf("blob: %w", err)
		}
		s.roots = append(s.roots, root)
	}
	if len(drives) > 1 {
		l, err := erasure.ForNodes(len(drives))
		if err != nil {
			return nil, err
		}
		if s.code, err = erasure.New(l, blockSize); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Layout is the erasure layout of a drive set, or 1+0 for a single drive.
func (s *Store) Layout() erasure.Layout {
	if s.code == nil {
		return erasure.Layout{Data: 1}
	}
	return s.code.Layout()
}

// Drives is the number of drives.
func (s *Store) Drives() int { return len(s.roots) }

// shardWriter writes one blob's shard files.
type shardWriter struct {
	s     *Store
	id    string
	files []*os.File // nil where the drive failed
	bufs  []*bufio.Writer
	ew    *erasure.Writer
}

// createShards creates blob id's shard file on every drive it can; a
// drive that fails is left out while the write quorum holds.
func (s *Store) createShards(id string) (*shardWriter, error) {
	if !validID(id) {
		return nil, ErrInvalidID
	}
	n := len(s.roots)
	w := &shardWriter{s: s, id: id, files: make([]*os.File, n), bufs: make([]*bufio.Writer, n)}
	dst := make([]io.Writer, n)
	for i := range n {
		p, _ := s.pathOn(i, id)
		if err := s.ensureDir(filepath.Dir(p)); err != nil {
			continue
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			continue
		}
		w.files[i] = f
		w.bufs[i] = bufio.NewWriterSize(f, 64<<10)
		dst[i] = w.bufs[i]
	}
	ew, err := s.code.NewWriter(dst)
	if err != nil {
		w.close()
		s.Remove(id)
		return nil, fmt.Errorf("blob: create: %w", err)
	}
	w.ew = ew
	return w, nil
}

// commit ends the coding, then flushes and fsyncs every shard still
// written, in parallel, with its directory entry; it fails unless the
// write quorum of shards is durable.
func (w *shardWriter) commit() error {
	_, _, err := w.ew.Close()
	if err != nil {
		w.close()
		return fmt.Errorf("blob: %w", err)
	}
	errs := w.ew.Errs()
	var wg sync.WaitGroup
	for i, f := range w.files {
		if f == nil || errs[i] != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = syncShard(w.bufs[i], f)
		}()
	}
	wg.Wait()
	durable := 0
	for i, f := range w.files {
		if f == nil {
			continue
		}
		if errs[i] == nil {
			durable++
		} else {
			p, _ := w.s.pathOn(i, w.id)
			os.Remove(p) // a shard not durable is one to heal, not to read
		}
	}
	w.files = nil
	if q := w.s.code.Layout().WriteQuorum(); durable < q {
		return fmt.Errorf("blob: %w: %d of %d shards durable, %d needed", erasure.ErrWriteQuorum, durable, len(errs), q)
	}
	return nil
}

func syncShard(b *bufio.Writer, f *os.File) error {
	err := b.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(filepath.Dir(f.Name()))
	}
	return err
}

// close releases the shard files without making them durable.
func (w *shardWriter) close() {
	for _, f := range w.files {
		if f != nil {
			f.Close()
		}
	}
	w.files = nil
}

// shardFile is a blob read back from its shards.
type shardFile struct {
	*erasure.Reader
	files []*os.File
	size  int64
}

func (f *shardFile) Size() int64 { return f.size }

func (f *shardFile) Close() error {
	for _, x := range f.files {
		if x != nil {
			x.Close()
		}
	}
	return nil
}

// openShards opens blob id's shard files: those missing, or whose length
// is not the one the object's size gives, are read around.
func (s *Store) openShards(id string) (File, error) {
	files, size, err := s.shardFiles(id)
	if err != nil {
		return nil, err
	}
	src := make([]io.ReaderAt, len(files))
	sound := 0
	for i, f := range files {
		if f != nil {
			src[i] = f
			sound++
		}
	}
	if need := s.code.Layout().ReadQuorum(); sound < need {
		closeAll(files)
		return nil, fmt.Errorf("blob: %s: %w: %d of %d shards present, %d needed", id, erasure.ErrReadQuorum, sound, len(files), need)
	}
	r, err := s.code.NewReader(src, size)
	if err != nil {
		closeAll(files)
		return nil, err
	}
	return &shardFile{Reader: r, files: files, size: size}, nil
}

// shardFiles opens every shard file of blob id and learns the object's
// size from the first sound footer; shards that are missing or of another
// length are nil.
func (s *Store) shardFiles(id string) ([]*os.File, int64, error) {
	if !validID(id) {
		return nil, 0, ErrInvalidID
	}
	files := make([]*os.File, len(s.roots))
	lens := make([]int64, len(s.roots))
	size := int64(-1)
	found := false
	for i := range s.roots {
		p, _ := s.pathOn(i, id)
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		found = true
		st, err := f.Stat()
		if err != nil {
			f.Close()
			continue
		}
		files[i], lens[i] = f, st.Size()
		if size < 0 {
			if n, err := s.code.StreamSize(f, st.Size()); err == nil {
				size = n
			}
		}
	}
	if !found {
		return nil, 0, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if size < 0 {
		closeAll(files)
		return nil, 0, fmt.Errorf("blob: %s: %w: no shard holds a sound footer", id, erasure.ErrReadQuorum)
	}
	for i, f := range files {
		if f != nil && lens[i] != s.code.ShardSize(size) {
			f.Close()
			files[i] = nil
		}
	}
	return files, size, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// HealResult is what Heal found for one blob.
type HealResult struct {
	// Bad lists the shards that were missing, of the wrong length, or
	// failed their checksums (a deep heal reads every shard).
	Bad []int
	// Rebuilt is how many of them were written again.
	Rebuilt int
}

// Heal checks blob id's shards and rebuilds the bad ones from the sound
// ones: each is written to a temporary file on its drive, fsynced and
// renamed into place, so a crash leaves either the old state or a whole
// shard. A quick heal checks that every shard file exists with the right
// length; deep also reads every shard through its checksums. dryRun
// reports without writing. On a single drive there is nothing to heal.
func (s *Store) Heal(id string, deep, dryRun bool) (HealResult, error) {
	if s.code == nil {
		return HealResult{}, nil
	}
	files, size, err := s.shardFiles(id)
	if err != nil {
		return HealResult{}, err
	}
	defer closeAll(files)
	bad := make([]bool, len(files))
	for i, f := range files {
		bad[i] = f == nil
	}
	if deep {
		for i, f := range files {
			if f != nil && !bad[i] && s.code.CheckShard(f, i, size) != nil {
				bad[i] = true
			}
		}
	}
	var res HealResult
	for i, b := range bad {
		if b {
			res.Bad = append(res.Bad, i)
		}
	}
	if len(res.Bad) == 0 || dryRun {
		return res, nil
	}
	src := make([]io.ReaderAt, len(files))
	for i, f := range files {
		if f != nil && !bad[i] {
			src[i] = f
		}
	}
	tmps := map[int]*os.File{}
	dst := map[int]io.Writer{}
	bufs := map[int]*bufio.Writer{}
	defer func() {
		for _, t := range tmps {
			t.Close()
			os.Remove(t.Name())
		}
	}()
	for _, i := range res.Bad {
		p, _ := s.pathOn(i, id)
		// Not ensureDir's cache: a drive put in place while serving has
		// lost the directories the cache remembers.
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return res, fmt.Errorf("blob: heal %s shard %d: %w", id, i, err)
		}
		if err := syncDir(filepath.Dir(filepath.Dir(p))); err != nil {
			return res, err
		}
		t, err := os.OpenFile(p+".heal", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return res, fmt.Errorf("blob: heal %s shard %d: %w", id, i, err)
		}
		tmps[i] = t
		bufs[i] = bufio.NewWriterSize(t, 64<<10)
		dst[i] = bufs[i]
	}
	if err := s.code.Rebuild(src, size, dst); err != nil {
		return res, fmt.Errorf("blob: heal %s: %w", id, err)
	}
	var errs []error
	for _, i := range res.Bad {
		t := tmps[i]
		p, _ := s.pathOn(i, id)
		err := bufs[i].Flush()
		if err == nil {
			err = t.Sync()
		}
		if err == nil {
			err = os.Rename(t.Name(), p)
		}
		if err == nil {
			err = syncDir(filepath.Dir(p))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("blob: heal %s shard %d: %w", id, i, err))
			continue
		}
		t.Close()
		delete(tmps, i)
		res.Rebuilt++
	}
	return res, errors.Join(errs...)
}

// driveMark is the record each drive of a set keeps at blobs/.drive: which
// site's set it belongs to and its place in it, so that a drive mounted in
// the wrong place, or a drive of another site, is refused rather than read
// as the wrong shards.
type driveMark struct {
	Deployment string `json:"deployment"`
	Index      int    `json:"index"`
	Drives     int    `json:"drives"`
}

const driveMarkFile = ".drive"

// Claim checks every drive of a set against its mark, and marks drives
// that have none (a new set, or an empty drive put in place of a failed
// one) as this deployment's; it returns the indexes of the drives it
// marked. A drive marked for another deployment, place or set size is an
// error. On a single drive it does nothing.
func (s *Store) Claim(deployment string) (marked []int, err error) {
	if s.code == nil {
		return nil, nil
	}
	want := func(i int) driveMark { return driveMark{Deployment: deployment, Index: i, Drives: len(s.roots)} }
	for i, root := range s.roots {
		p := filepath.Join(root, driveMarkFile)
		raw, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			if err := writeMark(p, want(i)); err != nil {
				return marked, err
			}
			marked = append(marked, i)
			continue
		}
		if err != nil {
			return marked, fmt.Errorf("blob: drive %d (%s): %w", i+1, root, err)
		}
		var m driveMark
		if err := json.Unmarshal(raw, &m); err != nil {
			return marked, fmt.Errorf("blob: drive %d (%s): unreadable mark: %w", i+1, root, err)
		}
		if m != want(i) {
			return marked, fmt.Errorf("blob: drive %d (%s) is drive %d of %d of deployment %s, not drive %d of %d of %s: give the drives in their original order",
				i+1, filepath.Dir(root), m.Index+1, m.Drives, m.Deployment, i+1, len(s.roots), deployment)
		}
	}
	return marked, nil
}

func writeMark(p string, m driveMark) error {
	raw, _ := json.Marshal(m)
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("blob: mark drive: %w", err)
	}
	_, err = f.Write(raw)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err == nil {
		err = syncDir(filepath.Dir(p))
	}
	if err != nil {
		return fmt.Errorf("blob: mark drive: %w", err)
	}
	return nil
}
