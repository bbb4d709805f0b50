package erasure

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
)

func TestForNodes(t *testing.T) {
	for _, tc := range []struct {
		nodes                int
		want                 Layout
		readLoss, writeLoss  int
		writeQuorum, readQrm int
	}{
		{1, Layout{1, 0}, 0, 0, 1, 1},
		{2, Layout{1, 1}, 1, 0, 2, 1},
		{3, Layout{2, 1}, 1, 1, 2, 2},
		{4, Layout{2, 2}, 2, 1, 3, 2},
		{5, Layout{3, 2}, 2, 2, 3, 3},
		{6, Layout{3, 3}, 3, 2, 4, 3},
		{7, Layout{4, 3}, 3, 3, 4, 4},
		{8, Layout{4, 4}, 4, 3, 5, 4},
		{12, Layout{8, 4}, 4, 4, 8, 8},
		{16, Layout{12, 4}, 4, 4, 12, 12},
	} {
		l, err := ForNodes(tc.nodes)
		if err != nil {
			t.Fatal(err)
		}
		r, w := l.Tolerates()
		if l != tc.want || r != tc.readLoss || w != tc.writeLoss || l.WriteQuorum() != tc.writeQuorum || l.ReadQuorum() != tc.readQrm {
			t.Errorf("%d nodes: %s tolerates %d/%d quorums %d/%d, want %s %d/%d %d/%d", tc.nodes, l, r, w,
				l.WriteQuorum(), l.ReadQuorum(), tc.want, tc.readLoss, tc.writeLoss, tc.writeQuorum, tc.readQrm)
		}
		// Any single node of a site of 4 or more can go without a write
		// or a read failing.
		if tc.nodes >= 4 && (r < 1 || w < 1) {
			t.Errorf("%d nodes: a single loss is not tolerated", tc.nodes)
		}
	}
	for _, n := range []int{0, -1, 17} {
		if _, err := ForNodes(n); err == nil {
			t.Errorf("ForNodes(%d) accepted", n)
		}
	}
}

func TestPlace(t *testing.T) {
	members := []string{"n1", "n2", "n3", "n4", "n5", "n6"}
	a := Place("b", "k", members)
	b := Place("b", "k", []string{"n6", "n5", "n4", "n3", "n2", "n1"})
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("placement depends on member order: %v vs %v", a, b)
	}
	// Spread: over many keys, every member holds shard 0 about equally.
	first := map[string]int{}
	for i := range 6000 {
		first[Place("b", fmt.Sprint("key", i), members)[0]]++
	}
	for _, m := range members {
		if first[m] < 800 || first[m] > 1200 {
			t.Errorf("member %s leads %d of 6000 placements", m, first[m])
		}
	}
	// Removing a member keeps the others in the same relative order.
	for i := range 500 {
		key := fmt.Sprint("key", i)
		full := Place("b", key, members)
		less := Place("b", key, members[:5])
		var kept []string
		for _, m := range full {
			if m != "n6" {
				kept = append(kept, m)
			}
		}
		if fmt.Sprint(kept) != fmt.Sprint(less) {
			t.Fatalf("%s: %v without n6 is %v, want %v", key, full, less, kept)
		}
	}
}

// shardSet is one object's shard streams kept in memory.
type shardSet [][]byte

func encode(t *testing.T, c *Code, data []byte) shardSet {
	t.Helper()
	bufs := make([]*bytes.Buffer, c.Layout().Shards())
	dst := make([]io.Writer, len(bufs))
	for i := range bufs {
		bufs[i] = new(bytes.Buffer)
		dst[i] = bufs[i]
	}
	w, err := c.NewWriter(dst)
	if err != nil {
		t.Fatal(err)
	}
	// Write in uneven pieces so that blocks straddle writes.
	for p := data; len(p) > 0; {
		k := min(len(p), 1+len(p)%7919)
		if _, err := w.Write(p[:k]); err != nil {
			t.Fatal(err)
		}
		p = p[k:]
	}
	size, lost, err := w.Close()
	if err != nil || size != int64(len(data)) || len(lost) != 0 {
		t.Fatalf("close: size %d lost %v err %v", size, lost, err)
	}
	out := make(shardSet, len(bufs))
	for i, b := range bufs {
		out[i] = b.Bytes()
		if int64(len(out[i])) != c.ShardSize(size) {
			t.Fatalf("shard %d is %d bytes, ShardSize says %d", i, len(out[i]), c.ShardSize(size))
		}
	}
	return out
}

func (s shardSet) sources(lost ...int) []io.ReaderAt {
	src := make([]io.ReaderAt, len(s))
	for i, b := range s {
		src[i] = bytes.NewReader(b)
	}
	for _, i := range lost {
		src[i] = nil
	}
	return src
}

func decode(t *testing.T, c *Code, src []io.ReaderAt, size int64) ([]byte, *Reader, error) {
	t.Helper()
	r, err := c.NewReader(src, size)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	return got, r, err
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// TestRoundTrip: every layout from 1 to 16 nodes gives the object back
// whole with any Parity shards lost, and refuses with one more.
func TestRoundTrip(t *testing.T) {
	const bs = MinBlockSize
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, bs - 1, bs, bs + 1, 3*bs + bs/2}
	for n := 1; n <= MaxNodes; n++ {
		l, _ := ForNodes(n)
		c, err := New(l, bs)
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range sizes {
			data := randomBytes(rng, size)
			shards := encode(t, c, data)
			for i, sh := range shards {
				if got, err := c.StreamSize(bytes.NewReader(sh), int64(len(sh))); err != nil || got != int64(size) {
					t.Fatalf("%s size %d: shard %d says size %d, %v", l, size, i, got, err)
				}
				if _, err := c.StreamSize(bytes.NewReader(sh[:len(sh)-1]), int64(len(sh)-1)); err == nil {
					t.Fatalf("%s size %d: a shard cut short gave a size", l, size)
				}
			}
			for trial := range 4 {
				lost := rng.Perm(l.Shards())[:l.Parity]
				if trial == 0 {
					lost = nil
				}
				got, _, err := decode(t, c, shards.sources(lost...), int64(size))
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("%s size %d lost %v: %d bytes, err %v", l, size, lost, len(got), err)
				}
			}
			if size > 0 {
				lost := rng.Perm(l.Shards())[:l.Parity+1]
				if _, _, err := decode(t, c, shards.sources(lost...), int64(size)); !errors.Is(err, ErrReadQuorum) {
					t.Fatalf("%s size %d lost %v: err %v, want read quorum", l, size, lost, err)
				}
			}
		}
	}
}

// TestRoundTripDefaultBlock: with the default block size, objects of
// sizes around where a Writer's buffers grow, and around a block, come
// back whole, with any Parity shards lost.
func TestRoundTripDefaultBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	l, _ := ForNodes(4)
	c, err := New(l, 0)
	if err != nil {
		t.Fatal(err)
	}
	bs := c.BlockSize()
	for _, size := range []int{firstBuf - 1, firstBuf, firstBuf + 1, 5*firstBuf + 3, bs - 1, bs, bs + 1, 2*bs + bs/3} {
		data := randomBytes(rng, size)
		shards := encode(t, c, data)
		lost := rng.Perm(l.Shards())[:l.Parity]
		got, _, err := decode(t, c, shards.sources(lost...), int64(size))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d lost %v: %d bytes, err %v", size, lost, len(got), err)
		}
	}
}

// TestCorruptionIsReadAround: a flipped byte in a shard's piece or header
// is caught by its checksum, the block comes from the other shards, and
// the shard is reported bad.
func TestCorruptionIsReadAround(t *testing.T) {
	l := Layout{Data: 3, Parity: 2}
	c, _ := New(l, MinBlockSize)
	rng := rand.New(rand.NewPCG(3, 4))
	data := randomBytes(rng, 5*MinBlockSize+17)
	for _, at := range []int{3, headerSize + 1, int(c.blockOffset(2)) + 100} {
		shards := encode(t, c, data)
		shards[1][at] ^= 0x40
		got, r, err := decode(t, c, shards.sources(), int64(len(data)))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("flip at %d: %d bytes, err %v", at, len(got), err)
		}
		if bad := r.Bad(); fmt.Sprint(bad) != "[1]" {
			t.Fatalf("flip at %d: bad shards %v, want [1]", at, bad)
		}
	}
	// Corruption in more shards than parity is an error, never wrong bytes.
	shards := encode(t, c, data)
	for i := range 3 {
		shards[i][headerSize+crcSize+i] ^= 1
	}
	if got, _, err := decode(t, c, shards.sources(), int64(len(data))); !errors.Is(err, ErrReadQuorum) {
		t.Fatalf("three corrupt shards: %d bytes, err %v", len(got), err)
	}
}

func TestReadAtRanges(t *testing.T) {
	c, _ := New(Layout{Data: 2, Parity: 2}, MinBlockSize)
	rng := rand.New(rand.NewPCG(5, 6))
	data := randomBytes(rng, 7*MinBlockSize+333)
	shards := encode(t, c, data)
	r, _ := c.NewReader(shards.sources(0), int64(len(data)))
	for range 200 {
		off := rng.IntN(len(data) + 10)
		n := rng.IntN(3 * MinBlockSize)
		p := make([]byte, n)
		k, err := r.ReadAt(p, int64(off))
		want := data[min(off, len(data)):min(off+n, len(data))]
		if !bytes.Equal(p[:k], want) {
			t.Fatalf("ReadAt(%d, %d): wrong bytes", off, n)
		}
		if k < n && err != io.EOF || k == n && err != nil {
			t.Fatalf("ReadAt(%d, %d) = %d, %v", off, n, k, err)
		}
	}
}

type failingWriter struct{ after int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errors.New("disk gone")
	}
	f.after--
	return len(p), nil
}

// TestWriteQuorum: a write goes on with lost destinations while the
// quorum holds, reports them, and fails once it does not.
func TestWriteQuorum(t *testing.T) {
	l := Layout{Data: 2, Parity: 2} // quorum 3
	c, _ := New(l, MinBlockSize)
	data := bytes.Repeat([]byte("twinlake"), MinBlockSize)
	mk := func(failing ...int) ([]io.Writer, []*bytes.Buffer) {
		dst := make([]io.Writer, 4)
		bufs := make([]*bytes.Buffer, 4)
		for i := range dst {
			bufs[i] = new(bytes.Buffer)
			dst[i] = bufs[i]
		}
		for _, i := range failing {
			dst[i] = &failingWriter{after: 3}
		}
		return dst, bufs
	}
	dst, bufs := mk(2)
	w, err := c.NewWriter(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	_, lost, err := w.Close()
	if err != nil || fmt.Sprint(lost) != "[2]" {
		t.Fatalf("one lost: lost %v err %v", lost, err)
	}
	src := []io.ReaderAt{bytes.NewReader(bufs[0].Bytes()), bytes.NewReader(bufs[1].Bytes()), nil, bytes.NewReader(bufs[3].Bytes())}
	if got, _, err := decode(t, c, src, int64(len(data))); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read after a lost shard: err %v", err)
	}

	dst, _ = mk(1, 2)
	w, _ = c.NewWriter(dst)
	_, err = w.Write(data)
	if _, _, cerr := w.Close(); !errors.Is(err, ErrWriteQuorum) || !errors.Is(cerr, ErrWriteQuorum) {
		t.Fatalf("two lost of 4: write %v close %v, want write quorum", err, cerr)
	}
	if _, err := c.NewWriter([]io.Writer{nil, nil, new(bytes.Buffer), new(bytes.Buffer)}); !errors.Is(err, ErrWriteQuorum) {
		t.Fatalf("writer over 2 of 4 destinations: %v", err)
	}
}

// stalledWriter takes writes until after, then blocks in Write until
// GiveUp is called (a stream to a node that stopped reading), and fails
// from then on.
type stalledWriter struct {
	after  int
	given  chan struct{}
	gaveUp atomic.Int32
}

func (s *stalledWriter) Write(p []byte) (int, error) {
	if s.after > 0 {
		s.after--
		return len(p), nil
	}
	<-s.given
	return 0, errors.New("given up on")
}

func (s *stalledWriter) GiveUp() {
	if s.gaveUp.Add(1) == 1 {
		close(s.given)
	}
}

// TestWriteGivesUpOnAStalledShard: with a grace set, a block's writes
// wait that long for a shard whose destination stopped taking them once
// the write quorum's are written, then give up on it (once, telling the
// caller) and go on without it; the object reads back from the others.
// A destination that cannot be given up on is waited for, as without a
// grace.
func TestWriteGivesUpOnAStalledShard(t *testing.T) {
	c, _ := New(Layout{Data: 2, Parity: 2}, MinBlockSize)
	data := randomBytes(rand.New(rand.NewPCG(3, 4)), 5*MinBlockSize+17)
	bufs := make([]*bytes.Buffer, 4)
	dst := make([]io.Writer, 4)
	for i := range dst {
		bufs[i] = new(bytes.Buffer)
		dst[i] = bufs[i]
	}
	const stalled = 1
	sw := &stalledWriter{after: 4, given: make(chan struct{})}
	dst[stalled] = sw
	w, err := c.NewWriter(dst)
	if err != nil {
		t.Fatal(err)
	}
	var told []int
	w.SetGrace(20*time.Millisecond, func(shard int) { told = append(told, shard) })
	done := make(chan error, 1)
	go func() {
		_, err := w.Write(data)
		if err == nil {
			_, lost, cerr := w.Close()
			if err = cerr; err == nil && fmt.Sprint(lost) != fmt.Sprint([]int{stalled}) {
				err = fmt.Errorf("lost %v, want [%d]", lost, stalled)
			}
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		sw.GiveUp()
		t.Fatal("the write waits for a stalled shard")
	}
	if fmt.Sprint(told) != fmt.Sprint([]int{stalled}) || sw.gaveUp.Load() != 1 {
		t.Fatalf("told of %v, the destination given up on %d times; want [%d], once", told, sw.gaveUp.Load(), stalled)
	}
	src := []io.ReaderAt{bytes.NewReader(bufs[0].Bytes()), nil, bytes.NewReader(bufs[2].Bytes()), bytes.NewReader(bufs[3].Bytes())}
	if got, _, err := decode(t, c, src, int64(len(data))); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read without the stalled shard: %d bytes, %v", len(got), err)
	}

	// A destination that cannot be given up on is waited for.
	slow := make(chan struct{})
	dst[stalled] = writerFunc(func(p []byte) (int, error) { <-slow; return len(p), nil })
	w, _ = c.NewWriter(dst)
	w.SetGrace(time.Millisecond, nil)
	go func() { time.Sleep(50 * time.Millisecond); close(slow) }()
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if _, lost, err := w.Close(); err != nil || len(lost) != 0 {
		t.Fatalf("a slow destination that cannot be given up on: lost %v, %v; want none", lost, err)
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestRebuild: the shards a node lost are written again byte for byte,
// and an empty object's shards are its headers.
func TestRebuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, l := range []Layout{{2, 1}, {2, 2}, {4, 4}, {12, 4}} {
		c, _ := New(l, MinBlockSize)
		for _, size := range []int{0, 10, 6*MinBlockSize + 5} {
			data := randomBytes(rng, size)
			shards := encode(t, c, data)
			lost := rng.Perm(l.Shards())[:l.Parity]
			dst := map[int]io.Writer{}
			bufs := map[int]*bytes.Buffer{}
			for _, i := range lost {
				bufs[i] = new(bytes.Buffer)
				dst[i] = bufs[i]
			}
			if err := c.Rebuild(shards.sources(lost...), int64(size), dst); err != nil {
				t.Fatalf("%s size %d: %v", l, size, err)
			}
			for _, i := range lost {
				if !bytes.Equal(bufs[i].Bytes(), shards[i]) {
					t.Fatalf("%s size %d: rebuilt shard %d differs", l, size, i)
				}
			}
		}
	}
	c, _ := New(Layout{2, 1}, MinBlockSize)
	shards := encode(t, c, []byte("hello world"))
	if err := c.Rebuild(shards.sources(0), 11, map[int]io.Writer{1: new(bytes.Buffer)}); !errors.Is(err, ErrReadQuorum) {
		t.Fatalf("rebuild with 1 of 3 sound: %v", err)
	}
}

func TestNewBounds(t *testing.T) {
	for _, tc := range []struct {
		l  Layout
		bs int
	}{{Layout{0, 1}, 0}, {Layout{2, -1}, 0}, {Layout{12, 5}, 0}, {Layout{2, 2}, 100}, {Layout{2, 2}, MaxBlockSize + 1}} {
		if _, err := New(tc.l, tc.bs); err == nil {
			t.Errorf("New(%s, %d) accepted", tc.l, tc.bs)
		}
	}
}

func FuzzParseHeader(f *testing.F) {
	c, _ := New(Layout{4, 2}, DefaultBlockSize)
	f.Add(c.header(5))
	f.Add([]byte("TLEC"))
	f.Fuzz(func(t *testing.T, h []byte) {
		sh, err := ParseHeader(h)
		if err != nil {
			return
		}
		if sh.Layout.Validate() != nil || sh.Index >= sh.Layout.Shards() || sh.BlockSize < MinBlockSize || sh.BlockSize > MaxBlockSize {
			t.Fatalf("accepted out-of-bounds header %+v", sh)
		}
	})
}

// FuzzDecode: whatever a drive hands back for the shards, a read returns
// the object's bytes exactly or an error, never other bytes and never a
// panic.
func FuzzDecode(f *testing.F) {
	c, _ := New(Layout{3, 2}, MinBlockSize)
	data := bytes.Repeat([]byte("0123456789abcdef"), MinBlockSize/8+3)
	f.Add(uint16(0), byte(1), uint8(0), uint16(17))
	f.Add(uint16(headerSize+2), byte(0x80), uint8(4), uint16(0))
	f.Fuzz(func(t *testing.T, at uint16, flip byte, shard uint8, cut uint16) {
		bufs := make([]*bytes.Buffer, 5)
		dst := make([]io.Writer, 5)
		for i := range bufs {
			bufs[i] = new(bytes.Buffer)
			dst[i] = bufs[i]
		}
		w, _ := c.NewWriter(dst)
		_, _ = w.Write(data)
		if _, _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		src := make([]io.ReaderAt, 5)
		for i, b := range bufs {
			p := b.Bytes()
			if i == int(shard%5) {
				if len(p) > 0 {
					p[int(at)%len(p)] ^= flip
				}
				p = p[:len(p)-int(cut)%len(p)]
			}
			if i == int(shard/5%5) && shard >= 5 {
				p = p[:len(p)/2]
				p[len(p)-1] ^= 0xff
			}
			src[i] = bytes.NewReader(p)
		}
		r, _ := c.NewReader(src, int64(len(data)))
		got, err := io.ReadAll(r)
		if err == nil && !bytes.Equal(got, data) {
			t.Fatalf("wrong bytes without an error")
		}
	})
}

// TestPlaceNameKeepsTheOldOrder: blobs written before placement by key
// were placed by the rendezvous hash of "", 0, their ID, 0 and the
// member's name; PlaceName must find the same drives.
func TestPlaceNameKeepsTheOldOrder(t *testing.T) {
	members := []string{"0", "1", "2", "3", "4", "5"}
	for i := range 200 {
		id := fmt.Sprintf("%032x", i*7919)
		type ranked struct {
			m string
			s uint64
		}
		var rs []ranked
		for _, m := range members {
			rs = append(rs, ranked{m, xxhash.Sum64String("\x00" + id + "\x00" + m)})
		}
		slices.SortFunc(rs, func(a, b ranked) int {
			if c := cmp.Compare(b.s, a.s); c != 0 {
				return c
			}
			return cmp.Compare(a.m, b.m)
		})
		var want []string
		for _, r := range rs {
			want = append(want, r.m)
		}
		if got := PlaceName(id, members); !slices.Equal(got, want) {
			t.Fatalf("%s placed %v, was %v", id, got, want)
		}
	}
}
