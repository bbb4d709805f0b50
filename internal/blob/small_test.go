package blob

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/erasure"
)

func shardDrive(t *testing.T, dir string) *LocalDrive {
	t.Helper()
	d, err := NewShardDrive(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func putShard(t *testing.T, w ShardWriter, err error, data []byte) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

func readShard(t *testing.T, d Drive, id string) []byte {
	t.Helper()
	r, err := d.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestShardDriveKeepsSmallShardsInItsStore: a shard of at most
// SmallShardMax bytes is in the drive's store, not a file; a larger one
// is a file; both read back, survive a reopen, are listed once, refuse a
// second Create and are removed.
func TestShardDriveKeepsSmallShardsInItsStore(t *testing.T) {
	dir := t.TempDir()
	d := shardDrive(t, dir)
	small, large := NewID(), NewID()
	smallData := bytes.Repeat([]byte("s"), SmallShardMax)
	largeData := bytes.Repeat([]byte("L"), SmallShardMax+1)
	w, err := d.Create(small)
	putShard(t, w, err, smallData)
	w, err = d.Create(large)
	// Written in two parts: the second takes it past the bound.
	putShard(t, w, err, largeData[:10])
	w, err = d.Rewrite(large) // replaced whole by its rewrite
	putShard(t, w, err, largeData)
	if fileExists(filepath.Join(dir, "blobs", small[:2], small)) {
		t.Fatal("a small shard was written as a file")
	}
	if !fileExists(filepath.Join(dir, "blobs", large[:2], large)) {
		t.Fatal("a large shard is not a file")
	}
	if _, err := d.Create(small); !errors.Is(err, os.ErrExist) {
		t.Fatalf("second create of a small shard: %v", err)
	}
	if _, err := d.Create(large); !errors.Is(err, os.ErrExist) {
		t.Fatalf("second create of a large shard: %v", err)
	}

	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = shardDrive(t, dir)
	if got := readShard(t, d, small); !bytes.Equal(got, smallData) {
		t.Fatalf("small shard after reopen: %d bytes", len(got))
	}
	if got := readShard(t, d, large); !bytes.Equal(got, largeData) {
		t.Fatalf("large shard after reopen: %d bytes", len(got))
	}
	for _, id := range []string{small, large} {
		ids, err := d.List(id[:2])
		if err != nil || slices.Index(ids, id) < 0 {
			t.Fatalf("list %s: %v %v", id[:2], ids, err)
		}
	}

	for _, id := range []string{small, large} {
		if err := d.Remove(id); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Open(id); !errors.Is(err, ErrNotFound) {
			t.Fatalf("open removed shard: %v", err)
		}
		if ids, _ := d.List(id[:2]); slices.Contains(ids, id) {
			t.Fatalf("removed shard %s still listed", id)
		}
	}
}

// TestShardDriveRewriteMovesAShard: a rewrite leaves one copy of the shard,
// in the place its new size puts it, and a rewrite given up leaves the old
// one; a shard left in both places by a crash is read from the store and
// listed once.
func TestShardDriveRewriteMovesAShard(t *testing.T) {
	dir := t.TempDir()
	d := shardDrive(t, dir)
	id := NewID()
	file := filepath.Join(dir, "blobs", id[:2], id)
	large := bytes.Repeat([]byte("L"), SmallShardMax+1)

	w, err := d.createFile(id) // a shard written before the store, or large then
	putShard(t, w, err, large)
	w, err = d.Rewrite(id)
	putShard(t, w, err, []byte("small now"))
	if fileExists(file) {
		t.Fatal("the file is left beside the shard's rewrite into the store")
	}
	if got := readShard(t, d, id); string(got) != "small now" {
		t.Fatalf("read %q", got)
	}

	w, err = d.Rewrite(id)
	putShard(t, w, err, large)
	if found, _ := d.hasSmall(id); found {
		t.Fatal("the store keeps the shard rewritten as a file")
	}
	if got := readShard(t, d, id); !bytes.Equal(got, large) {
		t.Fatalf("read %d bytes", len(got))
	}

	w, err = d.Rewrite(id)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("given up"))
	w.Abort()
	if got := readShard(t, d, id); !bytes.Equal(got, large) {
		t.Fatalf("an aborted rewrite changed the shard: %d bytes", len(got))
	}

	// Both places, as a crash between a rewrite's two steps leaves them.
	b := d.small.db.NewBatch()
	b.Set([]byte(id), []byte("from the store"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	if got := readShard(t, d, id); string(got) != "from the store" {
		t.Fatalf("read %q, want the store's copy", got)
	}
	if ids, _ := d.List(id[:2]); len(ids) != 1 {
		t.Fatalf("listed %v, want %s once", ids, id)
	}
}

// TestShardDriveSet: a drive set over shard drives reads a small blob
// back around a lost drive and heals the lost shard into the store.
func TestShardDriveSet(t *testing.T) {
	base := t.TempDir()
	var set []Drive
	var drives []*LocalDrive
	for _, n := range []string{"a", "b", "c", "d"} {
		d := shardDrive(t, filepath.Join(base, n))
		drives, set = append(drives, d), append(set, d)
	}
	s, err := NewDriveSet(set, erasure.MinBlockSize)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789"), 1000)
	id := writeBlob(t, s, data)
	lost := s.driveOf(id)[0]
	if err := drives[lost].Remove(id); err != nil {
		t.Fatal(err)
	}
	if got, err := readBlob(s, id); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read around a lost shard: %d bytes, %v", len(got), err)
	}
	res, err := s.Heal(id, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rebuilt != 1 || len(res.Bad) != 1 {
		t.Fatalf("heal: %+v, want one shard rebuilt", res)
	}
	if found, _ := drives[lost].hasSmall(id); !found {
		t.Fatal("the rebuilt shard is not in the drive's store")
	}
	if got, err := readBlob(s, id); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read after heal: %d bytes, %v", len(got), err)
	}
}

// TestShardDriveKeepsItsReserve: below its free-space reserve a shard
// drive refuses a new small shard with ENOSPC (its store would stop the
// process on a failed write), and still reads and removes.
func TestShardDriveKeepsItsReserve(t *testing.T) {
	d := shardDrive(t, t.TempDir())
	id := NewID()
	w, err := d.Create(id)
	putShard(t, w, err, []byte("kept"))
	d.small.reserve = NewReserve(d.root, 1<<62)
	if _, err := d.Create(NewID()); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("create on a full drive: %v", err)
	}
	if _, err := d.Rewrite(id); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("rewrite on a full drive: %v", err)
	}
	if got := readShard(t, d, id); string(got) != "kept" {
		t.Fatalf("read %q", got)
	}
	if err := d.Remove(id); err != nil {
		t.Fatal(err)
	}

	// With 10 MiB above the reserve, a shard written to a file fails as
	// it would reach into the reserve, and a small one held until its
	// commit fails there; neither is left behind.
	const mib = 1 << 20
	d.small.reserve = &Reserve{dir: d.root, keep: 100 * mib, now: time.Now,
		free: func(string) (int64, error) { return 110 * mib, nil }}
	big := NewID()
	w, err = d.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, mib)
	written := 0
	for ; written < 20; written++ {
		if _, err = w.Write(chunk); err != nil {
			break
		}
	}
	if !errors.Is(err, syscall.ENOSPC) || written != 10 {
		t.Fatalf("a shard written into the reserve: %d MiB written, then %v", written, err)
	}
	w.Abort()
	d.small.reserve = &Reserve{dir: d.root, keep: 100 * mib, now: time.Now,
		free: func(string) (int64, error) { return 100*mib + 10, nil }}
	small := NewID()
	w, err = d.Create(small)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, 100))
	if err := w.Commit(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a small shard reaching into the reserve at its commit: %v", err)
	}
	for _, id := range []string{big, small} {
		if _, err := d.Open(id); !errors.Is(err, ErrNotFound) {
			t.Fatalf("shard %s refused for room: open %v", id, err)
		}
	}
}
