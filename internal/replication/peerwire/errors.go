package peerwire

import (
	"errors"
	"fmt"

	"github.com/twinlake/twinlake/internal/replication"
)

// ErrIncompatible is returned (inside an *IncompatibleError, or for a
// malformed Header) when a peer speaks a protocol version this site does
// not: older than MinCompatible, or newer than Version. It is a refusal,
// not a link failure: retrying will not help until one site is upgraded.
// It is replication.ErrIncompatible, so the engine classifies it without
// knowing the wire.
var ErrIncompatible = replication.ErrIncompatible

// ErrMalformed is a body that does not decode to the wire type of its call.
var ErrMalformed = errors.New("malformed peer protocol body")

// IncompatibleError names both versions of a refused pairing.
type IncompatibleError struct {
	Caller, Server int   // the versions of the calling and the called site
	Accepts        Range // what the refusing site accepts
	ByCaller       bool  // the caller refused the server's answer (else the server refused the call)
}

func (e *IncompatibleError) Error() string {
	by := "called"
	if e.ByCaller {
		by = "calling"
	}
	return fmt.Sprintf("%s: the calling site speaks version %d, the called site version %d; the %s site accepts versions %d to %d, upgrade the older site",
		ErrIncompatible, e.Caller, e.Server, by, e.Accepts.Min, e.Accepts.Max)
}

// Is makes errors.Is(err, ErrIncompatible) hold.
func (e *IncompatibleError) Is(target error) bool { return target == ErrIncompatible }
