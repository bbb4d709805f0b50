// Package peerwire holds the site-to-site peer protocol: its version rule
// and every request and response body of the peer API, with their
// conversions to and from the domain types. The storage records
// (objects.Version, objects.Bucket, replication.State, ...) are never sent
// as such: each has a wire twin here whose layout changes only with a new
// protocol Version, so a record may grow a field without changing what a
// peer reads.
//
// Version 1 is the wire as it was before this package existed: the bodies
// were the storage records' MessagePack and JSON layouts and calls carried
// no protocol header. Version 2 keeps those layouts key for key (a version
// 1 peer decodes version 2 bodies and the other way round, see
// compat_test.go in peerhttp) and adds the Header on every call and answer.
package peerwire

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is the peer protocol version this build speaks.
const Version = 2

// MinCompatible is the oldest version this build still serves and calls.
// A site answers peers speaking MinCompatible..Version and refuses others.
const MinCompatible = 1

// Header carries the sender's protocol version on every call, and the
// server's own version on every answer (refusals included). A call or an
// answer without it is version 1.
const Header = "X-Twinlake-Peer-Protocol"

// CodeIncompatible is the peer API error code of a refused protocol
// version.
const CodeIncompatible = "IncompatibleProtocol"

// ParseVersion reads a Header value: empty is version 1, anything else must
// be a positive decimal integer.
func ParseVersion(h string) (int, error) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 1, nil
	}
	v, err := strconv.Atoi(h)
	if err != nil || v < 1 {
		return 0, fmt.Errorf("%w: bad %s %q", ErrIncompatible, Header, h)
	}
	return v, nil
}

// CheckCaller decides whether this site, as the called one, serves a call
// claiming version caller. It returns nil or an *IncompatibleError naming
// both versions.
func CheckCaller(caller int) error {
	return check(Range{MinCompatible, Version}, caller, Version, false)
}

// CheckServer decides whether this site, as the caller, accepts an answer
// from a site speaking version server. A newer server is accepted: it
// answered, so it serves this site's version. It returns nil or an
// *IncompatibleError naming both versions.
func CheckServer(server int) error {
	if server > Version {
		return nil
	}
	return check(Range{MinCompatible, Version}, Version, server, true)
}

// Range is the versions a site accepts, both ends included.
type Range struct{ Min, Max int }

func check(accepts Range, caller, server int, byCaller bool) error {
	remote := caller
	if byCaller {
		remote = server
	}
	if remote < accepts.Min || remote > accepts.Max {
		return &IncompatibleError{Caller: caller, Server: server, Accepts: accepts, ByCaller: byCaller}
	}
	return nil
}

// Speak returns the version to use towards a peer known to speak remote
// (0: not known yet): the lower of the two, so a newer site talks down to
// an older peer during a rolling upgrade.
func Speak(remote int) int {
	if remote > 0 && remote < Version {
		return remote
	}
	return Version
}
