package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBenchHistogramPercentileExact(t *testing.T) {
	// Values below 256ns are counted exactly, so nearest-rank answers are exact.
	tests := []struct {
		name   string
		values []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"single p50", []time.Duration{7}, 50, 7},
		{"single p100", []time.Duration{7}, 100, 7},
		{"p0 is min", []time.Duration{5, 1, 9}, 0, 1},
		{"1..10 p50", seq(1, 10), 50, 5},
		{"1..10 p90", seq(1, 10), 90, 9},
		{"1..10 p91", seq(1, 10), 91, 10},
		{"1..10 p99", seq(1, 10), 99, 10},
		{"1..10 p100", seq(1, 10), 100, 10},
		{"1..10 p10", seq(1, 10), 10, 1},
		{"1..10 p11", seq(1, 10), 11, 2},
		{"1..100 p99", seq(1, 100), 99, 99},
		{"1..200 p99.5", seq(1, 200), 99.5, 199},
		{"unordered", []time.Duration{200, 3, 100, 50}, 50, 50},
		{"duplicates", []time.Duration{4, 4, 4, 9}, 75, 4},
		{"negative counts as zero", []time.Duration{-5, 10}, 50, 0},
		{"p above 100 clamps to max", []time.Duration{1, 2}, 150, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h Histogram
			for _, v := range tc.values {
				h.Record(v)
			}
			if got := h.Percentile(tc.p); got != tc.want {
				t.Errorf("Percentile(%v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

func seq(from, to int) []time.Duration {
	var s []time.Duration
	for i := from; i <= to; i++ {
		s = append(s, time.Duration(i))
	}
	return s
}

// nearestRank is the reference: the exact nearest-rank percentile of sorted.
func nearestRank(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p * float64(len(sorted)) / 100))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

func TestBenchHistogramPercentileBoundedError(t *testing.T) {
	// Above the exact range each answer is the top of the true value's
	// bucket: never below the truth and at most 1/128 above it.
	r := rand.New(rand.NewPCG(1, 2))
	dists := map[string]func() time.Duration{
		"uniform 1ms-10ms": func() time.Duration { return time.Millisecond + time.Duration(r.Int64N(int64(9*time.Millisecond))) },
		"exponential 5ms":  func() time.Duration { return time.Duration(r.ExpFloat64() * float64(5*time.Millisecond)) },
		"bimodal": func() time.Duration {
			if r.IntN(10) == 0 {
				return 2 * time.Second
			}
			return 300 * time.Microsecond
		},
	}
	for name, next := range dists {
		t.Run(name, func(t *testing.T) {
			var h Histogram
			vals := make([]time.Duration, 20000)
			for i := range vals {
				vals[i] = next()
				h.Record(vals[i])
			}
			slices.Sort(vals)
			for _, p := range []float64{1, 25, 50, 90, 99, 99.9, 100} {
				want, got := nearestRank(vals, p), h.Percentile(p)
				if got < want || float64(got-want) > float64(want)/subBuckets {
					t.Errorf("p%v = %v, exact %v: outside [exact, exact*(1+1/128)]", p, got, want)
				}
			}
			if h.Min() != vals[0] || h.Max() != vals[len(vals)-1] || h.Count() != uint64(len(vals)) {
				t.Errorf("min/max/count = %v/%v/%d, want %v/%v/%d", h.Min(), h.Max(), h.Count(), vals[0], vals[len(vals)-1], len(vals))
			}
		})
	}
}

func TestBenchHistogramBuckets(t *testing.T) {
	// Every bucket's top maps back to the bucket, the next value to the next
	// bucket, and buckets never overlap or leave gaps.
	for i := 0; i < numBuckets-1; i++ {
		hi := bucketHigh(i)
		if got := bucketOf(hi); got != i {
			t.Fatalf("bucketOf(bucketHigh(%d)=%d) = %d", i, hi, got)
		}
		if hi == math.MaxInt64 {
			break
		}
		if got := bucketOf(hi + 1); got != i+1 {
			t.Fatalf("bucketOf(%d) = %d, want %d", hi+1, got, i+1)
		}
	}
	if got := bucketOf(math.MaxInt64); got >= numBuckets {
		t.Fatalf("bucketOf(MaxInt64) = %d, beyond %d buckets", got, numBuckets)
	}
}

func TestBenchHistogramMerge(t *testing.T) {
	var a, b, all Histogram
	for i := 1; i <= 1000; i++ {
		d := time.Duration(i) * time.Microsecond
		all.Record(d)
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	var merged Histogram
	merged.Merge(&a)
	merged.Merge(&Histogram{}) // merging an empty histogram changes nothing
	merged.Merge(&b)
	for _, p := range []float64{0, 50, 90, 99, 100} {
		if got, want := merged.Percentile(p), all.Percentile(p); got != want {
			t.Errorf("merged p%v = %v, want %v", p, got, want)
		}
	}
	if merged.Mean() != all.Mean() || merged.Min() != time.Microsecond || merged.Max() != time.Millisecond {
		t.Errorf("merged mean/min/max = %v/%v/%v", merged.Mean(), merged.Min(), merged.Max())
	}
}
