// Package meta owns twinlake's ordered, transactional key-value seam. Every
// piece of metadata (buckets, object versions, replication journal, retry
// queue, catalog, config, IAM) lives behind Store. The Pebble implementation
// is the production engine; the in-memory one serves unit tests. Nothing
// outside this package touches Pebble.
package meta

import (
	"errors"
	"io"
)

// Store is an ordered key-value store with atomic batches.
//
// Implementations are safe for concurrent use. Reads observe every batch
// committed before them. Keys and values passed in are not retained; values
// returned are owned by the caller.
type Store interface {
	// Get returns the value stored under key, or ErrNotFound.
	Get(key []byte) ([]byte, error)
	// View calls fn with the value stored under key, or returns
	// ErrNotFound; the value is valid only while fn runs (no copy is made
	// for a caller that decodes it at once).
	View(key []byte, fn func(value []byte) error) error
	// NewBatch starts an empty write batch.
	NewBatch() Batch
	// Iter returns an iterator over keys in [lower, upper) in ascending order;
	// a nil upper means no bound. The caller must Close it.
	Iter(lower, upper []byte) (Iterator, error)
	io.Closer
}

// Batch collects writes that commit atomically: all or none.
type Batch interface {
	// Set writes value under key. The batch keeps copies of both: the
	// caller may reuse them once Set returns.
	Set(key, value []byte)
	Delete(key []byte)
	// DeleteRange removes every key in [lower, upper).
	DeleteRange(lower, upper []byte)
	// Len reports how many operations the batch holds.
	Len() int
	// Commit applies the batch. With sync true it returns only once the batch
	// is durable on stable storage: callers acknowledge writes after it.
	Commit(sync bool) error
	// AfterCommit registers fn to run when Commit returns, whether the
	// commit succeeded or not (the batch's writes are then visible to
	// every read started after, or never will be), with Commit's error: a
	// batch whose commit failed may still have been applied (an etcd
	// transaction whose answer was lost). A batch never committed never
	// runs fn.
	AfterCommit(fn func(err error))
}

// Iterator walks keys in order. Key and Value are valid until the next call
// to Next or Close; copy them to keep them.
type Iterator interface {
	// First positions at the first key; it reports whether one exists.
	First() bool
	// SeekGE positions at the first key >= key.
	SeekGE(key []byte) bool
	// Next advances; it reports whether a key is there.
	Next() bool
	Key() []byte
	Value() []byte
	// Close releases the iterator and reports any error met while iterating.
	Close() error
}

// PrefixEnd returns the smallest key greater than every key with the given
// prefix, or nil if there is none (the prefix is all 0xff).
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// Scan calls fn for every key in [lower, upper) until fn returns false or an
// error. It is a convenience over Iter for callers that consume in one pass.
func Scan(s Store, lower, upper []byte, fn func(key, value []byte) (bool, error)) error {
	it, err := s.Iter(lower, upper)
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		more, err := fn(it.Key(), it.Value())
		if err != nil {
			it.Close()
			return err
		}
		if !more {
			break
		}
	}
	return it.Close()
}

// MultiViewer is a Store that reads several keys in one call: for a
// store across the network (etcd), one round trip instead of one each.
type MultiViewer interface {
	// ViewMany calls fn for each key, in order, with its value and true,
	// or nil and false when it is absent; a value is valid only while fn
	// runs. The reads observe every batch committed before the call.
	ViewMany(keys [][]byte, fn func(i int, value []byte, found bool) error) error
}

// ViewMany reads keys from s as MultiViewer does: in as few calls as s
// allows, or one View per key when s reads only one at a time.
func ViewMany(s Store, keys [][]byte, fn func(i int, value []byte, found bool) error) error {
	if mv, ok := s.(MultiViewer); ok {
		return mv.ViewMany(keys, fn)
	}
	for i, k := range keys {
		called := false
		err := s.View(k, func(v []byte) error {
			called = true
			return fn(i, v, true)
		})
		if !called && errors.Is(err, ErrNotFound) {
			err = fn(i, nil, false)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
