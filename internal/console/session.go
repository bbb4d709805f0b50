package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"sync"
	"time"
)

// Cookie and header names of a console session.
const (
	// SessionCookie is the prefix of the session cookie's name, which
	// ends with a digest of the Host (cookieName).
	SessionCookie = "twinlake_console"
	CSRFHeader    = "X-Twinlake-CSRF"
	// PollHeader marks a live page's background poll: it does not count as
	// user activity, so an open Sites page does not keep a session alive.
	PollHeader = "X-Twinlake-Poll"
)

// session is one signed-in browser. The credential never leaves the
// server; the browser holds only the random session id (HttpOnly cookie)
// and the CSRF token (answered by sign-in and /api/session, sent back in
// CSRFHeader on every change).
type session struct {
	id        string
	csrf      string
	accessKey string
	secretKey string
	created   time.Time
	lastSeen  time.Time
}

// sessions is the server-side session table. Sessions live in memory only:
// a restart signs everyone out.
type sessions struct {
	idle time.Duration
	max  int
	now  func() time.Time

	mu sync.Mutex
	m  map[string]*session
}

func newSessions(idle time.Duration, max int, now func() time.Time) *sessions {
	return &sessions{idle: idle, max: max, now: now, m: map[string]*session{}}
}

// randomToken returns 32 random bytes, base64url encoded.
func randomToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// create starts a session for a verified credential, evicting expired
// sessions and, at the bound, the least recently used one.
func (ss *sessions) create(accessKey, secretKey string) *session {
	now := ss.now()
	s := &session{id: randomToken(), csrf: randomToken(), accessKey: accessKey, secretKey: secretKey, created: now, lastSeen: now}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.m) >= ss.max {
		ss.sweepLocked(now)
	}
	for len(ss.m) >= ss.max {
		var oldest *session
		for _, o := range ss.m {
			if oldest == nil || o.lastSeen.Before(oldest.lastSeen) {
				oldest = o
			}
		}
		delete(ss.m, oldest.id)
	}
	ss.m[s.id] = s
	return s
}

// expired reports whether s has been idle too long or lived too long.
func (ss *sessions) expired(s *session, now time.Time) bool {
	return now.Sub(s.lastSeen) >= ss.idle || now.Sub(s.created) >= MaxSessionLifetime
}

func (ss *sessions) sweepLocked(now time.Time) {
	for id, s := range ss.m {
		if ss.expired(s, now) {
			delete(ss.m, id)
		}
	}
}

// get returns the live session id names, a copy safe to read without the
// lock. touch records user activity; an expired session is removed.
func (ss *sessions) get(id string, touch bool) (session, bool) {
	if id == "" {
		return session{}, false
	}
	now := ss.now()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.m[id]
	if !ok {
		return session{}, false
	}
	if ss.expired(s, now) {
		delete(ss.m, id)
		return session{}, false
	}
	if touch {
		s.lastSeen = now
	}
	return *s, true
}

// remove ends a session (sign-out).
func (ss *sessions) remove(id string) {
	ss.mu.Lock()
	delete(ss.m, id)
	ss.mu.Unlock()
}

// len is the number of sessions held, expired ones included until swept.
func (ss *sessions) len() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.m)
}

// validCSRF compares a presented token with the session's in constant time.
func validCSRF(s session, presented string) bool {
	return presented != "" && subtle.ConstantTimeCompare([]byte(s.csrf), []byte(presented)) == 1
}
