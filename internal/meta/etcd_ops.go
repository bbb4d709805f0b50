package meta

import (
	"bytes"
	"slices"
)

// batchOp is one write of a batch, in the order it was made.
type batchOp struct {
	kind       opKind
	key, value []byte // key is the lower bound of a range delete
	end        []byte // upper bound of a range delete (nil: no bound)
}

type opKind uint8

const (
	opSet opKind = iota
	opDelete
	opDeleteRange
)

// keyRange is [lo, hi); a nil hi has no upper bound.
type keyRange struct{ lo, hi []byte }

func (r keyRange) has(k []byte) bool {
	return bytes.Compare(k, r.lo) >= 0 && (r.hi == nil || bytes.Compare(k, r.hi) < 0)
}

// pointWrite is the last write of a batch to one key.
type pointWrite struct {
	key    []byte
	value  []byte
	delete bool
}

// collapse turns a batch's writes, applied in order, into the same effect
// as a set of writes that touch each key once and whose range deletes
// overlap neither each other nor any written key: what an etcd
// transaction accepts (it refuses a key written twice, and a put inside a
// deleted range). A point delete inside a deleted range is dropped; a
// write after a range delete splits the range around its key.
func collapse(ops []batchOp) (points []pointWrite, ranges []keyRange) {
	last := map[string]int{} // key -> index in points, -1 once dropped
	for _, op := range ops {
		switch op.kind {
		case opSet, opDelete:
			w := pointWrite{key: op.key, value: op.value, delete: op.kind == opDelete}
			if i, ok := last[string(op.key)]; ok && i >= 0 {
				points[i] = w
			} else {
				last[string(op.key)] = len(points)
				points = append(points, w)
			}
		case opDeleteRange:
			r := keyRange{op.key, op.end}
			for i := range points {
				if points[i].key != nil && r.has(points[i].key) {
					delete(last, string(points[i].key))
					points[i].key = nil // overwritten by the range
				}
			}
			ranges = append(ranges, r)
		}
	}
	points = slices.DeleteFunc(points, func(w pointWrite) bool { return w.key == nil })
	ranges = mergeRanges(ranges)
	// Split the ranges around the keys written after them, and drop
	// point deletes the ranges already cover.
	kept := points[:0]
	for _, w := range points {
		i := slices.IndexFunc(ranges, func(r keyRange) bool { return r.has(w.key) })
		if i < 0 {
			kept = append(kept, w)
			continue
		}
		if w.delete {
			continue // the range deletes it already
		}
		r := ranges[i]
		after := keyRange{append(append([]byte(nil), w.key...), 0), r.hi}
		ranges = slices.Replace(ranges, i, i+1, keyRange{r.lo, w.key}, after)
		kept = append(kept, w)
	}
	ranges = slices.DeleteFunc(ranges, func(r keyRange) bool { return r.hi != nil && bytes.Compare(r.lo, r.hi) >= 0 })
	return kept, ranges
}

// mergeRanges returns the union of rs as sorted, disjoint ranges.
func mergeRanges(rs []keyRange) []keyRange {
	rs = slices.DeleteFunc(rs, func(r keyRange) bool { return r.hi != nil && bytes.Compare(r.lo, r.hi) >= 0 })
	slices.SortFunc(rs, func(a, b keyRange) int { return bytes.Compare(a.lo, b.lo) })
	var out []keyRange
	for _, r := range rs {
		if n := len(out); n > 0 && (out[n-1].hi == nil || bytes.Compare(r.lo, out[n-1].hi) <= 0) {
			if out[n-1].hi != nil && (r.hi == nil || bytes.Compare(r.hi, out[n-1].hi) > 0) {
				out[n-1].hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}
