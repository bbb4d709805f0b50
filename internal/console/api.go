package console

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// call is one console API request, as the signed-in user.
type call struct {
	sess session
	cl   *clients
	ctx  context.Context
}

// route is one console API call. public calls need no session; every call
// that is not a GET needs the CSRF token besides.
type route struct {
	method, path string
	public       bool
	h            func(c *Console, w http.ResponseWriter, r *http.Request, cl *call) error
}

// routes is the console's JSON API, under Prefix+"api/".
func (c *Console) routes() []route {
	return []route{
		{http.MethodPost, "login", true, (*Console).login},
		{http.MethodPost, "logout", false, (*Console).logout},
		{http.MethodGet, "session", false, (*Console).sessionInfo},

		{http.MethodGet, "sites", false, (*Console).sites},

		{http.MethodGet, "tables-dr", false, (*Console).tablesDR},
		{http.MethodPost, "tables-dr/{action}", false, (*Console).tablesDRAction},

		{http.MethodGet, "buckets", false, (*Console).listBuckets},
		{http.MethodPost, "buckets", false, (*Console).makeBucket},
		{http.MethodGet, "buckets/{bucket}/objects", false, (*Console).listObjects},
		{http.MethodGet, "buckets/{bucket}/versions", false, (*Console).listVersions},
		{http.MethodGet, "buckets/{bucket}/object", false, (*Console).download},
		{http.MethodPut, "buckets/{bucket}/object", false, (*Console).upload},
		{http.MethodDelete, "buckets/{bucket}/object", false, (*Console).deleteObject},
		{http.MethodGet, "buckets/{bucket}/settings", false, (*Console).bucketSettings},
		{http.MethodPut, "buckets/{bucket}/settings", false, (*Console).setBucketSettings},

		{http.MethodGet, "warehouses", false, (*Console).warehouses},
		{http.MethodGet, "warehouses/{warehouse}/namespaces", false, (*Console).namespaces},
		{http.MethodGet, "warehouses/{warehouse}/tables", false, (*Console).tables},
		{http.MethodGet, "warehouses/{warehouse}/table", false, (*Console).table},

		{http.MethodGet, "server", false, (*Console).server},
		{http.MethodPut, "server/config/{subsys}", false, (*Console).setConfig},
	}
}

// wrap authenticates the session, checks the CSRF token of changes and
// answers the handler's error.
func (c *Console) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w = &timedWriter{ResponseWriter: w, start: time.Now()}
		cl := &call{ctx: r.Context()}
		if err := c.authenticate(r, rt, cl); err != nil {
			writeError(w, err)
			return
		}
		if err := rt.h(c, w, r, cl); err != nil {
			writeError(w, err)
		}
	})
}

func (c *Console) authenticate(r *http.Request, rt route, cl *call) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !sameOrigin(r) {
		return errCrossOrigin
	}
	if rt.public {
		return nil
	}
	ck, err := r.Cookie(cookieName(r))
	if err != nil {
		return errNoSession
	}
	s, ok := c.sessions.get(ck.Value, r.Header.Get(PollHeader) == "")
	if !ok {
		return errNoSession
	}
	// A user disabled, removed or re-keyed since sign-in loses the session.
	if !c.credentialValid(s.accessKey, s.secretKey) {
		c.sessions.remove(s.id)
		return errNoSession
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !validCSRF(s, r.Header.Get(CSRFHeader)) {
		return errCSRF
	}
	cl.sess = s
	cl.cl, err = c.clientsFor(s, originOf(r))
	return err
}

// cookieName is the session cookie's name for the host the browser used.
// Browsers scope cookies by host, not port: two sites on one host (the
// demo's) would otherwise overwrite each other's session.
func cookieName(r *http.Request) string {
	sum := sha256.Sum256([]byte(strings.ToLower(r.Host)))
	return SessionCookie + "_" + hex.EncodeToString(sum[:4])
}

// credentialValid checks a key pair as SigV4 would find it.
func (c *Console) credentialValid(accessKey, secretKey string) bool {
	if accessKey == "" || secretKey == "" || c.cfg.Credentials.IsService(accessKey) {
		return false
	}
	secret, ok := c.cfg.Credentials.SecretKey(accessKey)
	return ok && subtle.ConstantTimeCompare([]byte(secret), []byte(secretKey)) == 1
}

// LoginRequest is the body of a sign-in.
type LoginRequest struct {
	AccessKey string `json:"accessKey"`
	SecretKey string `json:"secretKey"`
}

// SessionInfo answers sign-in and /api/session.
type SessionInfo struct {
	AccessKey   string `json:"accessKey"`
	CSRF        string `json:"csrf"`
	IdleTimeout int64  `json:"idleTimeoutSeconds"`
	PollSeconds int64  `json:"pollSeconds"`
	MaxUpload   int64  `json:"maxUpload"`
}

func (c *Console) info(s session) SessionInfo {
	return SessionInfo{AccessKey: s.accessKey, CSRF: s.csrf, IdleTimeout: int64(c.cfg.IdleTimeout / time.Second),
		PollSeconds: int64(PollInterval / time.Second), MaxUpload: c.cfg.MaxUpload}
}

func (c *Console) login(w http.ResponseWriter, r *http.Request, _ *call) error {
	// JSON only: a cross-site form cannot send it without a preflight.
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return fmt.Errorf("%w: sign-in takes application/json", errBadRequest)
	}
	host := remoteHost(r)
	if !c.failures.allowed(host) {
		return errTooManySignIns
	}
	var req LoginRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if !c.credentialValid(req.AccessKey, req.SecretKey) {
		c.failures.failed(host)
		c.log.Info("console sign-in refused", "accessKey", req.AccessKey, "remote", r.RemoteAddr)
		return errSignIn
	}
	if ck, err := r.Cookie(cookieName(r)); err == nil {
		c.sessions.remove(ck.Value) // no session fixation: a fresh id every sign-in
	}
	s := c.sessions.create(req.AccessKey, req.SecretKey)
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(r), Value: s.id, Path: Prefix, HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
	c.log.Info("console sign-in", "accessKey", s.accessKey, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, c.info(*s))
	return nil
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, cl *call) error {
	c.sessions.remove(cl.sess.id)
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: "", Path: Prefix, MaxAge: -1, HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (c *Console) sessionInfo(w http.ResponseWriter, _ *http.Request, cl *call) error {
	writeJSON(w, http.StatusOK, c.info(cl.sess))
	return nil
}

// maxJSONBody bounds the JSON bodies the console reads.
const maxJSONBody = 64 << 10

func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxJSONBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", errBadRequest, err)
	}
	return nil
}

// page reads the offset and limit of a paged list: limit defaults to def and
// is capped at 1000.
func page(r *http.Request, def int) (offset, limit int, err error) {
	q := r.URL.Query()
	if v := q.Get("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			return 0, 0, fmt.Errorf("%w: offset %q", errBadRequest, v)
		}
	}
	limit = def
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 {
			return 0, 0, fmt.Errorf("%w: limit %q", errBadRequest, v)
		}
	}
	return offset, min(limit, 1000), nil
}

// timedWriter adds a Server-Timing header (the time the call took up to
// its answer's headers) so pages and benches can tell server time from
// network time.
type timedWriter struct {
	http.ResponseWriter
	start time.Time
	wrote bool
}

func (t *timedWriter) WriteHeader(code int) {
	if !t.wrote {
		t.wrote = true
		ms := float64(time.Since(t.start).Microseconds()) / 1000
		t.Header().Set("Server-Timing", fmt.Sprintf("console;dur=%.3f", ms))
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *timedWriter) Write(b []byte) (int, error) {
	if !t.wrote {
		t.WriteHeader(http.StatusOK)
	}
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (t *timedWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
