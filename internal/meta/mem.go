package meta

import (
	"bytes"
	"sort"
	"sync"
)

// MemStore is an in-memory Store for unit tests. It keeps keys in a sorted
// slice; it is not meant for large data sets.
type MemStore struct {
	mu     sync.RWMutex
	keys   [][]byte
	vals   map[string][]byte
	closed bool
}

var _ Store = (*MemStore)(nil)

// NewMem returns an empty MemStore.
func NewMem() *MemStore { return &MemStore{vals: map[string][]byte{}} }

// Get implements Store.
func (m *MemStore) Get(key []byte) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	v, ok := m.vals[string(key)]
	if !ok {
		return nil, ErrNotFound
	}
	return append([]byte(nil), v...), nil
}

// View implements Store.
func (m *MemStore) View(key []byte, fn func([]byte) error) error {
	v, err := m.Get(key)
	if err != nil {
		return err
	}
	return fn(v)
}

// NewBatch implements Store.
func (m *MemStore) NewBatch() Batch { return &memBatch{m: m} }

// Iter implements Store. The iterator sees a snapshot taken now.
func (m *MemStore) Iter(lower, upper []byte) (Iterator, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	lo := sort.Search(len(m.keys), func(i int) bool { return bytes.Compare(m.keys[i], lower) >= 0 })
	it := &memIter{pos: -1}
	for _, k := range m.keys[lo:] {
		if upper != nil && bytes.Compare(k, upper) >= 0 {
			break
		}
		it.keys = append(it.keys, k)
		it.vals = append(it.vals, m.vals[string(k)])
	}
	return it, nil
}

// Close implements Store.
func (m *MemStore) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

func (m *MemStore) set(k, v []byte) {
	if _, ok := m.vals[string(k)]; !ok {
		i := sort.Search(len(m.keys), func(i int) bool { return bytes.Compare(m.keys[i], k) >= 0 })
		m.keys = append(m.keys, nil)
		copy(m.keys[i+1:], m.keys[i:])
		m.keys[i] = k
	}
	m.vals[string(k)] = v
}

func (m *MemStore) del(k []byte) {
	if _, ok := m.vals[string(k)]; !ok {
		return
	}
	delete(m.vals, string(k))
	i := sort.Search(len(m.keys), func(i int) bool { return bytes.Compare(m.keys[i], k) >= 0 })
	m.keys = append(m.keys[:i], m.keys[i+1:]...)
}

type memOp struct {
	kind       byte // 's', 'd', 'r'
	key, value []byte
}

type memBatch struct {
	m     *MemStore
	ops   []memOp
	after []func(error)
}

func (b *memBatch) Set(k, v []byte) {
	b.ops = append(b.ops, memOp{'s', bytes.Clone(k), bytes.Clone(v)})
}
func (b *memBatch) Delete(k []byte) { b.ops = append(b.ops, memOp{'d', bytes.Clone(k), nil}) }
func (b *memBatch) DeleteRange(lo, hi []byte) {
	b.ops = append(b.ops, memOp{'r', bytes.Clone(lo), bytes.Clone(hi)})
}
func (b *memBatch) Len() int { return len(b.ops) }

func (b *memBatch) AfterCommit(fn func(error)) { b.after = append(b.after, fn) }

func (b *memBatch) Commit(bool) (err error) {
	defer func() {
		for _, fn := range b.after {
			fn(err)
		}
	}()
	m := b.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	for _, op := range b.ops {
		switch op.kind {
		case 's':
			m.set(op.key, op.value)
		case 'd':
			m.del(op.key)
		case 'r':
			var doomed [][]byte
			for _, k := range m.keys {
				if bytes.Compare(k, op.key) >= 0 && bytes.Compare(k, op.value) < 0 {
					doomed = append(doomed, k)
				}
			}
			for _, k := range doomed {
				m.del(k)
			}
		}
	}
	return nil
}

type memIter struct {
	keys, vals [][]byte
	pos        int
}

func (i *memIter) First() bool { i.pos = 0; return i.valid() }
func (i *memIter) SeekGE(k []byte) bool {
	i.pos = sort.Search(len(i.keys), func(j int) bool { return bytes.Compare(i.keys[j], k) >= 0 })
	return i.valid()
}
func (i *memIter) Next() bool    { i.pos++; return i.valid() }
func (i *memIter) valid() bool   { return i.pos >= 0 && i.pos < len(i.keys) }
func (i *memIter) Key() []byte   { return i.keys[i.pos] }
func (i *memIter) Value() []byte { return i.vals[i.pos] }
func (i *memIter) Close() error  { return nil }
