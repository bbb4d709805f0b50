package cluster

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestVoterCount(t *testing.T) {
	for _, tc := range []struct{ nodes, voters int }{
		{0, 0}, {1, 1}, {2, 1}, {3, 3}, {4, 3}, {5, 5}, {6, 5}, {9, 5}, {16, 5},
	} {
		if got := VoterCount(tc.nodes); got != tc.voters {
			t.Errorf("VoterCount(%d) = %d, want %d", tc.nodes, got, tc.voters)
		}
	}
}

// nodeList returns n distinct node names n01:9000... in order.
func nodeList(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("n%02d:9000", i+1)
	}
	return out
}

func TestParseNodesAndVoters(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flag   string
		sorted []string // nil when an error is expected
		voters []string
		err    error
	}{
		{name: "one", flag: "a:1", sorted: []string{"a:1"}, voters: []string{"a:1"}},
		{name: "two, one voter", flag: "b:1,a:1", sorted: []string{"a:1", "b:1"}, voters: []string{"a:1"}},
		{name: "three sorted, blanks dropped", flag: " c:1 , a:1,b:1 ",
			sorted: []string{"a:1", "b:1", "c:1"}, voters: []string{"a:1", "b:1", "c:1"}},
		{name: "four, three voters", flag: "d:1,c:1,b:1,a:1",
			sorted: []string{"a:1", "b:1", "c:1", "d:1"}, voters: []string{"a:1", "b:1", "c:1"}},
		{name: "sixteen, five voters", flag: strings.Join(nodeList(16), ","),
			sorted: nodeList(16), voters: nodeList(5)},
		{name: "ip addresses", flag: "[::1]:9000,127.0.0.1:9001",
			sorted: []string{"127.0.0.1:9001", "[::1]:9000"}, voters: []string{"127.0.0.1:9001"}},
		{name: "empty", flag: "", err: ErrNoNodes},
		{name: "blank", flag: "  ", err: ErrNoNodes},
		{name: "seventeen", flag: strings.Join(nodeList(17), ","), err: ErrTooManyNodes},
		{name: "duplicate", flag: "a:1,b:1,a:1", err: ErrDuplicateNode},
		{name: "duplicate by case", flag: "Node:1,node:1", err: ErrDuplicateNode},
		{name: "empty entry", flag: "a:1,,b:1", err: ErrBadNode},
		{name: "no port", flag: "a", err: ErrBadNode},
		{name: "empty port", flag: "a:", err: ErrBadNode},
		{name: "port zero", flag: "a:0", err: ErrBadNode},
		{name: "port too big", flag: "a:65536", err: ErrBadNode},
		{name: "port leading zero", flag: "a:09000", err: ErrBadNode},
		{name: "port named", flag: "a:http", err: ErrBadNode},
		{name: "no host", flag: ":9000", err: ErrBadNode},
		{name: "blank inside", flag: "a b:1", err: ErrBadNode},
		{name: "slash in host", flag: "a/b:1", err: ErrBadNode},
		{name: "label starts with dash", flag: "-a:1", err: ErrBadNode},
		{name: "url", flag: "http://a:1", err: ErrBadNode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sorted, err := ParseNodes(tc.flag)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("ParseNodes(%q) error %v, want %v", tc.flag, err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(sorted, tc.sorted) {
				t.Fatalf("ParseNodes(%q) = %q, %v; want %q", tc.flag, sorted, err, tc.sorted)
			}
			voters, err := Voters(sorted)
			if err != nil || !slices.Equal(voters, tc.voters) {
				t.Fatalf("Voters(%q) = %q, %v; want %q", sorted, voters, err, tc.voters)
			}
		})
	}
}

func TestVotersSameForAnyOrder(t *testing.T) {
	a := []string{"e:1", "a:1", "d:1", "c:1", "b:1", "f:1"}
	b := slices.Clone(a)
	slices.Reverse(b)
	va, errA := Voters(a)
	vb, errB := Voters(b)
	if errA != nil || errB != nil || !slices.Equal(va, vb) {
		t.Fatalf("voters differ by order: %q (%v) and %q (%v)", va, errA, vb, errB)
	}
	if a[0] != "e:1" {
		t.Fatalf("Voters reordered its argument: %q", a)
	}
}

func TestSortNodesReportsEveryProblem(t *testing.T) {
	_, err := SortNodes([]string{"a", "b:1", "b:1", "c:0"})
	for _, want := range []error{ErrBadNode, ErrDuplicateNode} {
		if !errors.Is(err, want) {
			t.Errorf("error %v does not report %v", err, want)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 3 {
		t.Errorf("error reports %d problems, want 3: %v", n, err)
	}
}
