package s3api

import (
	"fmt"
	"slices"
	"testing"
)

// TestDeleteLanesOf: every key of a DeleteObjects request is in exactly one
// lane, every copy of a key in the same one, each lane in the request's
// order, and there are never more lanes than maxDeleteLanes or keys.
func TestDeleteLanesOf(t *testing.T) {
	for _, n := range []int{1, 2, 15, 127, 128, 129, 1000} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%d", i%(n/2+1)) // most keys named twice
		}
		lanes := deleteLanesOf(n, func(i int) string { return keys[i] })
		if len(lanes) > min(n, maxDeleteLanes) {
			t.Fatalf("n=%d: %d lanes", n, len(lanes))
		}
		seen := make([]int, n)
		laneOf := map[string]int{}
		for l, lane := range lanes {
			if len(lane) == 0 || !slices.IsSorted(lane) {
				t.Fatalf("n=%d: lane %d is %v", n, l, lane)
			}
			for _, i := range lane {
				seen[i]++
				if prev, ok := laneOf[keys[i]]; ok && prev != l {
					t.Fatalf("n=%d: key %s in lanes %d and %d", n, keys[i], prev, l)
				}
				laneOf[keys[i]] = l
			}
		}
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: index %d in %d lanes", n, i, c)
			}
		}
		if n >= 2*maxDeleteLanes && len(lanes) < maxDeleteLanes/2 {
			t.Fatalf("n=%d: keys spread over only %d lanes", n, len(lanes))
		}
	}
}
