package iam

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twinlake/twinlake/internal/iam/policy"
)

// STS sessions. AssumeRole issues a temporary credential whose session
// token is self-contained: the parent access key, the expiry, the inline
// policy and the temporary secret, sealed with AES-256-GCM under a key
// derived from the root secret. Nothing is stored or replicated, so a
// temporary credential works on the site that issued it (sites have
// different root secrets), and rotating the root secret revokes every
// outstanding one. Its rights are read from the parent on every request,
// so disabling or removing the parent revokes them at once.

// Bounds of a session's duration, AWS's.
const (
	MinSessionDuration     = 15 * time.Minute
	MaxSessionDuration     = 12 * time.Hour
	DefaultSessionDuration = time.Hour
)

var (
	// ErrSessionDenied is returned by AssumeRole when the caller may not
	// assume a role: unknown or disabled, the site-replication service
	// credential, or itself a temporary credential (no role chaining).
	ErrSessionDenied = errors.New("iam: caller may not assume a role")
	// ErrSessionDuration is returned by AssumeRole for a duration outside
	// MinSessionDuration..MaxSessionDuration.
	ErrSessionDuration = errors.New("iam: session duration out of range")
)

// tokenInfo keys the token sealer apart from the secret-at-rest one;
// tokenAAD versions the token format.
const (
	tokenInfo = "sts session tokens, aes-256-gcm"
	tokenAAD  = "twinlake-sts-v1"
)

// SessionCredential is a temporary credential issued by AssumeRole.
type SessionCredential struct {
	Credential
	SessionToken string
	Expiration   time.Time
}

// sessionClaims is what a session token seals.
type sessionClaims struct {
	Parent    string          `json:"p"`
	AccessKey string          `json:"k"`
	Secret    string          `json:"s"`
	Expiry    int64           `json:"e"` // Unix seconds
	Policy    json.RawMessage `json:"pol,omitempty"`
	// Vended marks a credential vended by the Iceberg catalog: its rights
	// are Policy alone, not the parent's intersected with it.
	Vended bool `json:"v,omitempty"`
}

// AssumeRole issues a temporary credential for parent (root, a user or an
// access key) lasting d, whose rights are parent's intersected with the
// inline policy if not empty. The expiry never outlasts an expiring parent
// access key.
func (s *Store) AssumeRole(parent string, d time.Duration, inline []byte) (SessionCredential, error) {
	id, ok := s.Identity(parent)
	if !ok || id.Service || id.Parent != "" {
		return SessionCredential{}, fmt.Errorf("%w: %q", ErrSessionDenied, parent)
	}
	return s.issue(id, d, inline, false)
}

// VendCredentials issues a temporary credential for the Iceberg catalog's
// credential vending: its rights are exactly scope (which must not be
// empty), because the catalog vouches for them from the caller's s3tables
// rights, not the caller's s3 ones. It lasts d; the caller, or for a
// temporary credential its parent, must stay usable for it to work, so
// disabling or removing that identity revokes it at once.
func (s *Store) VendCredentials(caller string, d time.Duration, scope []byte) (SessionCredential, error) {
	id, ok := s.Identity(caller)
	if ok && id.Parent != "" {
		id, ok = s.Identity(id.Parent)
	}
	if !ok || id.Service || len(scope) == 0 {
		return SessionCredential{}, fmt.Errorf("%w: %q", ErrSessionDenied, caller)
	}
	return s.issue(id, d, scope, true)
}

// issue seals a session token for the long-term identity id.
func (s *Store) issue(id *Identity, d time.Duration, inline []byte, vended bool) (SessionCredential, error) {
	if d < MinSessionDuration || d > MaxSessionDuration {
		return SessionCredential{}, fmt.Errorf("%w: %s", ErrSessionDuration, d)
	}
	var pol json.RawMessage
	if len(inline) > 0 {
		p, err := policy.Parse(inline)
		if err != nil {
			return SessionCredential{}, err
		}
		pol = p.JSON()
	}
	exp := s.cfg.Now().Add(d).Truncate(time.Second)
	if !id.Expiry.IsZero() && id.Expiry.Before(exp) {
		exp = id.Expiry
	}
	c := sessionClaims{Parent: id.AccessKey, AccessKey: "ASIA" + randomKey(16), Secret: randomSecret(),
		Expiry: exp.Unix(), Policy: pol, Vended: vended}
	data, err := json.Marshal(c)
	if err != nil {
		return SessionCredential{}, err
	}
	token := base64.RawURLEncoding.EncodeToString(s.tokens.seal(string(data), tokenAAD))
	return SessionCredential{Credential: Credential{AccessKey: c.AccessKey, SecretKey: c.Secret},
		SessionToken: token, Expiration: time.Unix(c.Expiry, 0).UTC()}, nil
}

// SessionSecretKey implements sigv4.SessionCredentials: it opens token,
// which must have been issued by this site for accessKey, and returns the
// temporary secret while the session is unexpired and its parent usable.
func (s *Store) SessionSecretKey(accessKey, token string) (secret string, expired, ok bool) {
	sess := s.openSession(accessKey, token)
	switch {
	case sess == nil:
		return "", false, false
	case !s.cfg.Now().Before(sess.expiry):
		return "", true, false
	}
	id := s.sessionIdentity(accessKey)
	if id == nil {
		return "", false, false
	}
	return id.secret, false, true
}

// session is an opened session token.
type session struct {
	token  string
	parent string
	expiry time.Time
	inline *policy.Policy
	vended bool
	secret string
}

// sessionCache memoises opened session tokens by temporary access key, so
// a session's requests decrypt and parse once. An entry is only added for
// a token that opened, and Identity consults it only for a request that
// Verify authenticated with that token.
type sessionCache struct {
	mu sync.Mutex
	m  map[string]*session
}

// sessionCacheSweep is the size past which adding an entry first drops the
// expired ones.
const sessionCacheSweep = 4096

func (c *sessionCache) get(accessKey string) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[accessKey]
}

func (c *sessionCache) put(accessKey string, sess *session, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*session{}
	}
	if len(c.m) >= sessionCacheSweep {
		for k, e := range c.m {
			if !now.Before(e.expiry) {
				delete(c.m, k)
			}
		}
	}
	c.m[accessKey] = sess
}

// openSession returns the session token opens to, or nil if it does not
// open under this site's key or was issued for another access key.
func (s *Store) openSession(accessKey, token string) *session {
	if e := s.sessions.get(accessKey); e != nil && e.token == token {
		return e
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil
	}
	data, err := s.tokens.open(raw, tokenAAD)
	if err != nil {
		return nil
	}
	var c sessionClaims
	if json.Unmarshal([]byte(data), &c) != nil || c.AccessKey != accessKey || c.Parent == "" {
		return nil
	}
	sess := &session{token: token, parent: c.Parent, expiry: time.Unix(c.Expiry, 0), secret: c.Secret, vended: c.Vended}
	if len(c.Policy) > 0 {
		if sess.inline, err = policy.Parse(c.Policy); err != nil {
			return nil
		}
	}
	s.sessions.put(accessKey, sess, s.cfg.Now())
	return sess
}

// sessionIdentity derives the identity of an opened session from its
// parent's current one, or returns nil if there is no such session or the
// parent is no longer usable.
func (s *Store) sessionIdentity(accessKey string) *Identity {
	sess := s.sessions.get(accessKey)
	if sess == nil {
		return nil
	}
	parent, ok := s.snap.Load().creds[sess.parent]
	if !ok || parent.Service || !parent.Expiry.IsZero() && !s.cfg.Now().Before(parent.Expiry) {
		return nil
	}
	id := &Identity{AccessKey: accessKey, Username: parent.Username, Policies: parent.Policies,
		Session: parent.Session, Inline: sess.inline, Parent: sess.parent, Expiry: sess.expiry, secret: sess.secret}
	switch {
	case sess.vended:
		id.Policies, id.Session, id.Inline = []*policy.Policy{sess.inline}, nil, nil
	case parent.Root:
		id.Policies = []*policy.Policy{allowAll}
	}
	return id
}
