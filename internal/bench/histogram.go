package bench

import (
	"math"
	"math/bits"
	"time"
)

// The histogram is log-linear: values below 2*subBuckets nanoseconds have a
// bucket each (exact); above that every power-of-two range is split into
// subBuckets linear buckets, so a bucket is never wider than 1/subBuckets
// (under 0.8%) of the values in it. Memory is fixed (about 60 KiB) however
// long a run lasts, which a slice of samples would not be.
const (
	subBucketBits = 7
	subBuckets    = 1 << subBucketBits // 128
	exactLimit    = 2 * subBuckets     // values below are counted exactly
	// numBuckets covers every int64: the largest shift is 63-subBucketBits.
	numBuckets = exactLimit + (64-subBucketBits-1)*subBuckets
)

// Histogram records latencies with bounded relative error and answers
// percentile queries. The zero value is empty and ready. A Histogram is not
// safe for concurrent use: give each worker its own and Merge them.
type Histogram struct {
	counts [numBuckets]uint64
	n      uint64
	sum    time.Duration
	min    time.Duration
	max    time.Duration
}

// bucketOf maps a non-negative value to its bucket index.
func bucketOf(v int64) int {
	if v < exactLimit {
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - subBucketBits - 1 // v>>shift is in [subBuckets, 2*subBuckets)
	return exactLimit + (shift-1)*subBuckets + int(v>>shift) - subBuckets
}

// bucketHigh is the largest value that falls in bucket i.
func bucketHigh(i int) int64 {
	if i < exactLimit {
		return int64(i)
	}
	shift := (i-exactLimit)/subBuckets + 1
	sub := int64((i-exactLimit)%subBuckets + subBuckets)
	hi := uint64(sub+1)<<shift - 1
	if hi > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(hi)
}

// Record adds one latency; negative values count as zero.
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(int64(d))]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
	h.sum += d
}

// Merge adds every value recorded in o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of recorded values.
func (h *Histogram) Count() uint64 { return h.n }

// Min and Max are the exact extremes; Mean is exact too. All are 0 when
// the histogram is empty.
func (h *Histogram) Min() time.Duration { return h.min }

// Max is the largest recorded value.
func (h *Histogram) Max() time.Duration { return h.max }

// Mean is the average of the recorded values.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100): the
// smallest recorded value v such that at least p% of the values are <= v.
// The answer is the top of v's bucket clamped to [Min, Max], so it is exact
// below 256ns and at p=100, and otherwise at most 1/128 above the true value.
// p <= 0 gives Min; an empty histogram gives 0.
func (h *Histogram) Percentile(p float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	if p <= 0 {
		return h.min
	}
	// The epsilon keeps float error in p*n/100 from bumping an exact rank.
	rank := uint64(math.Ceil(p*float64(h.n)/100 - 1e-9))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(max(time.Duration(bucketHigh(i)), h.min), h.max)
		}
	}
	return h.max
}
