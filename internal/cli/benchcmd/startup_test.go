package benchcmd

import (
	"slices"
	"testing"
)

func TestParseStartupCounts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int64
		ok   bool
	}{
		{"10", []int64{10}, true},
		{"10, 200000,1000000", []int64{10, 200000, 1000000}, true},
		{"10,10", []int64{10, 10}, true},
		{"200000,10", nil, false},
		{"0", nil, false},
		{"ten", nil, false},
		{"", nil, false},
	} {
		got, err := parseCounts(tc.in)
		if (err == nil) != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("parseCounts(%q) = %v, %v", tc.in, got, err)
		}
	}
}
