package policy

import (
	"net/netip"
	"strings"
	"time"
)

// Request is what a surface asks about: who, which action on which
// resource, and the values of the condition keys. Build one per request;
// Evaluate only reads it.
type Request struct {
	// Action is the action's canonical name, e.g. "s3:GetObject".
	Action string
	// Resource is the ARN acted on, e.g. "arn:aws:s3:::bucket/key".
	Resource string
	// Anonymous is set for unsigned requests: only a Principal of "*"
	// matches them.
	Anonymous bool
	// Username is the identity's name (aws:username and bucket policy
	// principal matching); for an access key, the owning user's.
	Username string
	// AccessKey is the key that signed the request (a bucket policy
	// principal may name it).
	AccessKey string

	SourceIP netip.Addr // aws:SourceIp; invalid means unknown
	Secure   bool       // aws:SecureTransport
	Now      time.Time  // aws:CurrentTime; zero means time.Now()
	// Values holds the other condition keys present in the request, by
	// lower-case name: "s3:prefix", "s3:delimiter", "s3:max-keys",
	// "s3:x-amz-server-side-encryption", "s3tables:namespace", ...
	Values map[string]string
	// Lookup, when set, answers the condition keys Values does not hold
	// (lower-case name), for values costly to gather that a policy rarely
	// names (s3:ExistingObjectTag/<key> reads the object): it is called
	// only when a condition asks.
	Lookup func(name string) (string, bool)
}

// keyKind identifies condition keys answered from Request fields rather than
// Values, resolved once at compile time.
type keyKind uint8

const (
	keyOther keyKind = iota
	keySourceIP
	keySecureTransport
	keyCurrentTime
	keyEpochTime
	keyUsername
	keyUserID
	keyPrincipalType
)

var builtinKeys = map[string]keyKind{
	"aws:sourceip":        keySourceIP,
	"aws:securetransport": keySecureTransport,
	"aws:currenttime":     keyCurrentTime,
	"aws:epochtime":       keyEpochTime,
	"aws:username":        keyUsername,
	"aws:userid":          keyUserID,
	"aws:principaltype":   keyPrincipalType,
}

// condKey is a compiled condition key (or ${variable} name).
type condKey struct {
	name string // lower case
	kind keyKind
}

func newCondKey(name string) condKey {
	n := strings.ToLower(name)
	return condKey{name: n, kind: builtinKeys[n]}
}

// value returns the request's value of k and whether the request has one.
func (r *Request) value(k condKey) (string, bool) {
	switch k.kind {
	case keySourceIP:
		if !r.SourceIP.IsValid() {
			return "", false
		}
		return r.SourceIP.String(), true
	case keySecureTransport:
		if r.Secure {
			return "true", true
		}
		return "false", true
	case keyCurrentTime:
		return r.now().UTC().Format(time.RFC3339), true
	case keyEpochTime:
		return formatInt(r.now().Unix()), true
	case keyUsername, keyUserID:
		if r.Anonymous || r.Username == "" {
			return "", false
		}
		return r.Username, true
	case keyPrincipalType:
		if r.Anonymous {
			return "Anonymous", true
		}
		return "User", true
	}
	v, ok := r.Values[k.name]
	if !ok && r.Lookup != nil {
		return r.Lookup(k.name)
	}
	return v, ok
}

func (r *Request) now() time.Time {
	if r.Now.IsZero() {
		return time.Now()
	}
	return r.Now
}

func formatInt(n int64) string {
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
