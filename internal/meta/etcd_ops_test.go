package meta

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// applyInOrder is the meaning of a batch: its writes one after another.
func applyInOrder(state map[string]string, ops []batchOp) {
	for _, op := range ops {
		switch op.kind {
		case opSet:
			state[string(op.key)] = string(op.value)
		case opDelete:
			delete(state, string(op.key))
		case opDeleteRange:
			r := keyRange{op.key, op.end}
			for k := range state {
				if r.has([]byte(k)) {
					delete(state, k)
				}
			}
		}
	}
}

// applyCollapsed is how an etcd transaction applies the collapsed writes:
// all at once, so their order must not matter.
func applyCollapsed(t *testing.T, state map[string]string, points []pointWrite, ranges []keyRange) {
	t.Helper()
	seen := map[string]bool{}
	for _, w := range points {
		if seen[string(w.key)] {
			t.Fatalf("key %q written twice", w.key)
		}
		seen[string(w.key)] = true
		for _, r := range ranges {
			if r.has(w.key) {
				t.Fatalf("key %q written inside deleted range [%q, %q)", w.key, r.lo, r.hi)
			}
		}
	}
	for i := 1; i < len(ranges); i++ {
		if p := ranges[i-1]; p.hi == nil || bytes.Compare(p.hi, ranges[i].lo) > 0 {
			t.Fatalf("ranges overlap: %v", ranges)
		}
	}
	for _, r := range ranges {
		for k := range state {
			if r.has([]byte(k)) {
				delete(state, k)
			}
		}
	}
	for _, w := range points {
		if w.delete {
			delete(state, string(w.key))
		} else {
			state[string(w.key)] = string(w.value)
		}
	}
}

// TestCollapse: for random batches over a small key space, the collapsed
// writes have the batch's effect and are a valid etcd transaction.
func TestCollapse(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	keys := []string{"a", "a\x00", "ab", "b", "ba", "c", "d", "e"}
	key := func() []byte { return []byte(keys[rng.IntN(len(keys))]) }
	for trial := range 5000 {
		base := map[string]string{}
		for _, k := range keys {
			if rng.IntN(2) == 0 {
				base[k] = "old"
			}
		}
		var ops []batchOp
		for range 1 + rng.IntN(8) {
			switch rng.IntN(3) {
			case 0:
				ops = append(ops, batchOp{kind: opSet, key: key(), value: []byte(fmt.Sprint(trial))})
			case 1:
				ops = append(ops, batchOp{kind: opDelete, key: key()})
			case 2:
				lo, hi := key(), key()
				if rng.IntN(5) == 0 {
					hi = nil
				}
				ops = append(ops, batchOp{kind: opDeleteRange, key: lo, end: hi})
			}
		}
		want, got := maps.Clone(base), maps.Clone(base)
		applyInOrder(want, ops)
		points, ranges := collapse(ops)
		applyCollapsed(t, got, points, ranges)
		if !maps.Equal(want, got) {
			t.Fatalf("trial %d: ops %v\nin order %v\ncollapsed %v (points %v ranges %v)", trial, ops, sorted(want), sorted(got), points, ranges)
		}
	}
}

func sorted(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}
