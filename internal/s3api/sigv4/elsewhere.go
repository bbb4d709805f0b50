package sigv4

import (
	"crypto/sha256"
	"fmt"
	"net/http"
)

// PayloadCheck is what checking a request's payload needs once its
// signature is verified, so that a process that holds the body but did
// not verify the request (another node of the site, which received it)
// can read it with the same checks Result.Body makes. It holds the
// request's signing key: never store or log it, and send it only sealed.
type PayloadCheck struct {
	Mode          PayloadMode `json:"mode"`
	DecodedLength int64       `json:"decodedLength"`
	Signature     string      `json:"signature,omitempty"`
	AmzDate       string      `json:"amzDate,omitempty"`
	Scope         string      `json:"scope,omitempty"`
	Key           []byte      `json:"key,omitempty"` // signed streaming modes only
	Sum           []byte      `json:"sum,omitempty"` // PayloadSigned only
	Trailers      []string    `json:"trailers,omitempty"`
}

// PayloadCheck returns what checking the request's payload elsewhere
// needs, or false when the body cannot be read elsewhere: Verify read it
// already to hash it.
func (res *Result) PayloadCheck() (PayloadCheck, bool) {
	if res.bodyHashed || res.Payload < PayloadSigned || res.Payload > PayloadStreamingUnsignedTrailer {
		return PayloadCheck{}, false
	}
	pc := PayloadCheck{Mode: res.Payload, DecodedLength: res.DecodedLength, Trailers: res.declaredTrailers}
	switch {
	case res.Payload == PayloadSigned:
		pc.Sum = res.sum[:]
	case res.Payload.chunkSigned():
		pc.Signature, pc.AmzDate, pc.Scope, pc.Key = res.Signature, res.amzDate, res.scope, res.key[:]
	}
	return pc, true
}

// Result returns a Result whose Body and Trailers check a body as the
// Result pc came from would.
func (pc PayloadCheck) Result() (*Result, error) {
	if pc.Mode < PayloadSigned || pc.Mode > PayloadStreamingUnsignedTrailer {
		return nil, fmt.Errorf("sigv4: no payload mode %d", pc.Mode)
	}
	if pc.DecodedLength < -1 || pc.Mode.chunkSigned() && pc.DecodedLength < 0 {
		return nil, fmt.Errorf("sigv4: a decoded length of %d", pc.DecodedLength)
	}
	res := &Result{Payload: pc.Mode, DecodedLength: pc.DecodedLength, Signature: pc.Signature,
		amzDate: pc.AmzDate, scope: pc.Scope, declaredTrailers: pc.Trailers}
	switch {
	case pc.Mode == PayloadSigned:
		if len(pc.Sum) != sha256.Size {
			return nil, fmt.Errorf("sigv4: a payload digest of %d bytes", len(pc.Sum))
		}
		copy(res.sum[:], pc.Sum)
	case pc.Mode.chunkSigned():
		if len(pc.Key) != sha256.Size || len(pc.Signature) != 2*sha256.Size || pc.AmzDate == "" || pc.Scope == "" {
			return nil, fmt.Errorf("sigv4: an incomplete chunk signing check")
		}
		copy(res.key[:], pc.Key)
	}
	return res, nil
}

// SetTrailers makes h the trailing headers Trailers returns: those read
// with the body elsewhere (PayloadCheck).
func (res *Result) SetTrailers(h http.Header) { res.trailers = h }
