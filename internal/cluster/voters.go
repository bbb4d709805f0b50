package cluster

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// MaxNodes is the most nodes a site may have.
const MaxNodes = 16

// ParseNodes parses the value of --cluster (NODE1,NODE2,..., each host:port;
// blanks around an entry are dropped) and returns the nodes sorted, as
// SortNodes does.
func ParseNodes(flag string) ([]string, error) {
	if strings.TrimSpace(flag) == "" {
		return nil, ErrNoNodes
	}
	nodes := strings.Split(flag, ",")
	for i := range nodes {
		nodes[i] = strings.TrimSpace(nodes[i])
	}
	return SortNodes(nodes)
}

// SortNodes validates a site's node list and returns it sorted, in a new
// slice. It refuses an empty list (ErrNoNodes), more than MaxNodes entries
// (ErrTooManyNodes), an entry that is not host:port (ErrBadNode) and a node
// named twice, host names compared without regard to case (ErrDuplicateNode);
// every bad entry is reported at once.
func SortNodes(nodes []string) ([]string, error) {
	if len(nodes) == 0 {
		return nil, ErrNoNodes
	}
	var errs []error
	if len(nodes) > MaxNodes {
		errs = append(errs, fmt.Errorf("%w: %d given, at most %d", ErrTooManyNodes, len(nodes), MaxNodes))
	}
	seen := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		if err := checkNode(n); err != nil {
			errs = append(errs, err)
			continue
		}
		key := strings.ToLower(n)
		if seen[key] {
			errs = append(errs, fmt.Errorf("%w: %q", ErrDuplicateNode, n))
		}
		seen[key] = true
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sorted := slices.Clone(nodes)
	slices.Sort(sorted)
	return sorted, nil
}

// VoterCount returns how many of a site's n nodes run an etcd voting member:
// 1 for 1–2 nodes, 3 for 3–4 and 5 for 5 or more. The count is odd because an
// even one tolerates no more failures than the odd one below it while adding
// a member whose loss can cost the quorum; past 5, more voters only slow every
// write down.
func VoterCount(n int) int {
	switch {
	case n <= 0:
		return 0
	case n <= 2:
		return 1
	case n <= 4:
		return 3
	default:
		return 5
	}
}

// Voters returns the nodes that run a voting member: the first VoterCount of
// the sorted list. Every node given the same list, in any order, computes the
// same voters. The list is validated as SortNodes does.
func Voters(nodes []string) ([]string, error) {
	sorted, err := SortNodes(nodes)
	if err != nil {
		return nil, err
	}
	return sorted[:VoterCount(len(sorted))], nil
}

// checkNode reports whether n is host:port with a host name or IP address and
// a port 1..65535 written without leading zeros (so that one node has one
// spelling).
func checkNode(n string) error {
	host, port, err := net.SplitHostPort(n)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrBadNode, n)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 || strconv.FormatUint(p, 10) != port {
		return fmt.Errorf("%w: %q: port must be 1..65535", ErrBadNode, n)
	}
	if net.ParseIP(host) == nil && !validHostName(host) {
		return fmt.Errorf("%w: %q: bad host", ErrBadNode, n)
	}
	return nil
}

// validHostName reports whether h is a DNS name: dot-separated labels of
// 1..63 letters, digits, '-' or '_', not starting or ending with '-', at most
// 253 bytes in all.
func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
			if !ok {
				return false
			}
		}
	}
	return true
}
