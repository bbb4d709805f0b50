package meta

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// testStore is the conformance suite every Store implementation runs.
func testStore(t *testing.T, open func(t *testing.T) Store) {
	t.Run("GetMissing", func(t *testing.T) {
		s := open(t)
		if _, err := s.Get([]byte("nope")); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get missing: %v", err)
		}
	})
	t.Run("ViewAndAfterCommit", func(t *testing.T) {
		s := open(t)
		if err := s.View([]byte("nope"), func([]byte) error { t.Error("fn called for a missing key"); return nil }); !errors.Is(err, ErrNotFound) {
			t.Fatalf("View missing: %v", err)
		}
		b := s.NewBatch()
		b.Set([]byte("k"), []byte("value"))
		var visible []bool
		for range 2 {
			b.AfterCommit(func(commitErr error) {
				_, err := s.Get([]byte("k"))
				visible = append(visible, err == nil && commitErr == nil)
			})
		}
		if len(visible) != 0 {
			t.Fatal("AfterCommit ran before Commit")
		}
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
		if len(visible) != 2 || !visible[0] || !visible[1] {
			t.Fatalf("AfterCommit ran %d times, write visible %v", len(visible), visible)
		}
		var got string
		if err := s.View([]byte("k"), func(v []byte) error { got = string(v); return nil }); err != nil || got != "value" {
			t.Fatalf("View = %q, %v", got, err)
		}
		boom := errors.New("boom")
		if err := s.View([]byte("k"), func([]byte) error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("View's fn error: %v", err)
		}
	})
	t.Run("ViewMany", func(t *testing.T) {
		s := open(t)
		b := s.NewBatch()
		var keys [][]byte
		want := map[int]string{}
		for i := range 300 { // past one etcd read transaction
			k := []byte(fmt.Sprintf("m%03d", i))
			keys = append(keys, k)
			if i%3 != 1 {
				want[i] = fmt.Sprintf("v%d", i)
				b.Set(k, []byte(want[i]))
			}
		}
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, []byte("m007")) // a key twice
		var seen []int
		err := ViewMany(s, keys, func(i int, v []byte, found bool) error {
			seen = append(seen, i)
			w, ok := want[i%300]
			if i == 300 {
				w, ok = want[7]
			}
			if found != ok || string(v) != w {
				t.Errorf("key %d (%s): %q found=%t, want %q found=%t", i, keys[i], v, found, w, ok)
			}
			return nil
		})
		if err != nil || len(seen) != len(keys) || seen[0] != 0 || seen[len(seen)-1] != len(keys)-1 {
			t.Fatalf("ViewMany called fn for %d of %d keys (%v), err %v", len(seen), len(keys), seen[:min(len(seen), 3)], err)
		}
		boom := errors.New("boom")
		calls := 0
		if err := ViewMany(s, keys, func(int, []byte, bool) error { calls++; return boom }); !errors.Is(err, boom) || calls != 1 {
			t.Fatalf("ViewMany's fn error: %v after %d calls", err, calls)
		}
		if err := ViewMany(s, nil, func(int, []byte, bool) error { return boom }); err != nil {
			t.Fatalf("ViewMany of no keys: %v", err)
		}
	})
	t.Run("BatchAtomicAndOrdered", func(t *testing.T) {
		s := open(t)
		b := s.NewBatch()
		for _, k := range []string{"b", "a", "c", "d"} {
			b.Set([]byte(k), []byte("v"+k))
		}
		b.Delete([]byte("d"))
		if b.Len() != 5 {
			t.Fatalf("Len = %d", b.Len())
		}
		if _, err := s.Get([]byte("a")); !errors.Is(err, ErrNotFound) {
			t.Fatal("uncommitted write visible")
		}
		if err := b.Commit(true); err != nil {
			t.Fatal(err)
		}
		got := scanAll(t, s, nil, nil)
		if got != "a=va,b=vb,c=vc," {
			t.Fatalf("scan = %q", got)
		}
		if got := scanAll(t, s, []byte("b"), []byte("c")); got != "b=vb," {
			t.Fatalf("bounded scan = %q", got)
		}
	})
	t.Run("DeleteRangeAndSeek", func(t *testing.T) {
		s := open(t)
		b := s.NewBatch()
		for i := 0; i < 10; i++ {
			b.Set([]byte(fmt.Sprintf("k%02d", i)), []byte{byte(i)})
		}
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
		b = s.NewBatch()
		b.DeleteRange([]byte("k02"), []byte("k08"))
		if err := b.Commit(true); err != nil {
			t.Fatal(err)
		}
		if got := scanAll(t, s, []byte("k"), PrefixEnd([]byte("k"))); got != "k00=\x00,k01=\x01,k08=\x08,k09=\t," {
			t.Fatalf("after DeleteRange: %q", got)
		}
		it, err := s.Iter(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !it.SeekGE([]byte("k05")) || string(it.Key()) != "k08" {
			t.Fatalf("SeekGE landed on %q", it.Key())
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ConcurrentWriters", func(t *testing.T) {
		s := open(t)
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < 50; i++ {
					b := s.NewBatch()
					b.Set([]byte(fmt.Sprintf("w%d/%03d", w, i)), []byte("x"))
					if err := b.Commit(true); err != nil {
						t.Error(err)
						return
					}
				}
			}(w)
		}
		wg.Wait()
		n := 0
		if err := Scan(s, []byte("w"), PrefixEnd([]byte("w")), func(k, v []byte) (bool, error) {
			n++
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		if n != 400 {
			t.Fatalf("have %d keys, want 400", n)
		}
	})
	t.Run("ValuesAreCopies", func(t *testing.T) {
		s := open(t)
		k, v := []byte("key"), []byte("value")
		b := s.NewBatch()
		b.Set(k, v)
		// The batch keeps copies: its caller reuses its buffers at once.
		k[0], v[0] = 'K', 'X'
		if err := b.Commit(true); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get([]byte("key"))
		if err != nil || !bytes.Equal(got, []byte("value")) {
			t.Fatalf("Get = %q, %v", got, err)
		}
	})
}

func scanAll(t *testing.T, s Store, lo, hi []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Scan(s, lo, hi, func(k, v []byte) (bool, error) {
		fmt.Fprintf(&buf, "%s=%s,", k, v)
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestMemStore(t *testing.T) {
	testStore(t, func(t *testing.T) Store { return NewMem() })
}

func TestPebbleStore(t *testing.T) {
	testStore(t, func(t *testing.T) Store {
		s, err := OpenPebble(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestPebbleReopenKeepsSyncedWrites(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenPebble(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	b.Set([]byte("durable"), []byte("yes"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenPebble(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Get([]byte("durable")); err != nil || string(v) != "yes" {
		t.Fatalf("after reopen: %q %v", v, err)
	}
}

func TestPrefixEnd(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{[]byte("a"), []byte("b")},
		{[]byte{'a', 0xff}, []byte("b")},
		{[]byte{0xff, 0xff}, nil},
	} {
		if got := PrefixEnd(tc.in); !bytes.Equal(got, tc.want) {
			t.Errorf("PrefixEnd(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Values of separatedValueBytes or more go to blob files, read back through
// compactions and a reopen, and a blob file whose values are all deleted
// goes once compactions pass over their keys.
func TestPebbleSeparatesLargeValues(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenPebble(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	large := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 4096) }
	b := s.NewBatch()
	for i := range 200 {
		b.Set(fmt.Appendf(nil, "large/%03d", i), large(i))
		b.Set(fmt.Appendf(nil, "small/%03d", i), []byte("v"))
	}
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	m := s.db.Metrics()
	if m.BlobFiles.LiveCount == 0 || m.BlobFiles.ValueSize < 200*4096 || m.BlobFiles.ValueSize >= 201*4096 {
		t.Fatalf("after a flush: %d blob files holding %d bytes of values, want the 200 large values alone",
			m.BlobFiles.LiveCount, m.BlobFiles.ValueSize)
	}
	compactAll := func() {
		t.Helper()
		if err := s.db.Compact(context.Background(), []byte("a"), []byte("z"), true); err != nil {
			t.Fatal(err)
		}
	}
	compactAll()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = OpenPebble(dir, nil); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 200 {
		if v, err := s.Get(fmt.Appendf(nil, "large/%03d", i)); err != nil || !bytes.Equal(v, large(i)) {
			t.Fatalf("large/%03d after compaction and reopen: %d bytes, %v", i, len(v), err)
		}
	}
	b = s.NewBatch()
	b.DeleteRange([]byte("large/"), []byte("large0"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	compactAll()
	if n := s.db.Metrics().BlobFiles.LiveCount; n != 0 {
		t.Fatalf("%d blob files left once every value in them was deleted", n)
	}
	if v, err := s.Get([]byte("small/199")); err != nil || string(v) != "v" {
		t.Fatalf("small/199: %q %v", v, err)
	}
}
