// Package console is twinlake's browser console: embedded static pages
// (plain HTML, CSS and JavaScript, no external assets) and the JSON API they
// call, served on the site's own listener under Prefix.
//
// The console holds no authority of its own. Signing in checks an access
// key and secret against the same credential lookup SigV4 uses; the
// server-side session then keeps that credential, and every console call is
// made as a SigV4-signed request, in process, to the site's own S3, admin,
// catalog and metrics surfaces. What a user sees and may do is therefore
// decided by those surfaces' authorization (IAM policies through package
// policy) exactly as for any other client: the console never acts as root on
// a user's behalf.
package console

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Prefix is where the console is mounted: under the reserved twinlake name,
// so it never shadows a bucket called "console".
const Prefix = "/twinlake/console/"

// Bounds and defaults of the console's settings.
const (
	// DefaultIdleTimeout ends a session after this long without a user
	// action (live-page polls do not count).
	DefaultIdleTimeout = 30 * time.Minute
	MinIdleTimeout     = time.Second
	MaxIdleTimeout     = 24 * time.Hour
	// MaxSessionLifetime ends a session this long after sign-in, active or not.
	MaxSessionLifetime = 12 * time.Hour
	// DefaultMaxSessions bounds the session table; signing in beyond it
	// evicts the least recently used session.
	DefaultMaxSessions = 10000
	// DefaultMaxUpload bounds one upload through the console.
	DefaultMaxUpload = 1 << 30
	MaxMaxUpload     = 5 << 30
	// PollInterval is the fastest the live pages poll; the server samples
	// at most this often however many browsers look.
	PollInterval = 2 * time.Second
	// HistoryWindow is how much link history the Sites chart keeps.
	HistoryWindow = time.Hour
)

//go:embed static
var staticFS embed.FS

// Credentials resolves access keys as SigV4 does (iam.Store).
type Credentials interface {
	SecretKey(accessKey string) (secret string, ok bool)
	// IsService reports the site-replication credential, which may never
	// sign in.
	IsService(accessKey string) bool
}

// Authorizer decides admin actions for an access key with the site's
// policy engine (the admin surface's own authorizer).
type Authorizer interface {
	AllowAdmin(accessKey, action string) bool
}

// Config holds the console's collaborators and settings.
type Config struct {
	// Credentials checks sign-ins. Required.
	Credentials Credentials
	// Authorizer gates what the console serves from its own memory (the
	// scanner's recent events). Required.
	Authorizer Authorizer
	// Backend is the site's whole HTTP surface; console calls are signed
	// requests served by it in process. Required; it may be set after New
	// with SetBackend (the router holds the console itself).
	Backend http.Handler
	// Events, when set, lets the Tables DR page follow the catalog
	// scanner's trace events while someone looks at it.
	Events EventSource
	// PeerClient reaches other sites (their roles for the Sites page).
	// Default: a client with a 5 s timeout.
	PeerClient *http.Client
	// IdleTimeout ends idle sessions; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxSessions bounds the session table; 0 means DefaultMaxSessions.
	MaxSessions int
	// MaxUpload bounds one upload in bytes; 0 means DefaultMaxUpload.
	MaxUpload int64
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// ErrInvalidConfig is returned by New for a Config it cannot run with.
var ErrInvalidConfig = errors.New("console: invalid config")

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Credentials == nil {
		errs = append(errs, fmt.Errorf("%w: Credentials is required", ErrInvalidConfig))
	}
	if c.Authorizer == nil {
		errs = append(errs, fmt.Errorf("%w: Authorizer is required", ErrInvalidConfig))
	}
	if c.IdleTimeout != 0 && (c.IdleTimeout < MinIdleTimeout || c.IdleTimeout > MaxIdleTimeout) {
		errs = append(errs, fmt.Errorf("%w: IdleTimeout %v outside [%v, %v]", ErrInvalidConfig, c.IdleTimeout, MinIdleTimeout, MaxIdleTimeout))
	}
	if c.MaxSessions < 0 || c.MaxSessions > 1_000_000 {
		errs = append(errs, fmt.Errorf("%w: MaxSessions %d outside [0, 1000000]", ErrInvalidConfig, c.MaxSessions))
	}
	if c.MaxUpload < 0 || c.MaxUpload > MaxMaxUpload {
		errs = append(errs, fmt.Errorf("%w: MaxUpload %d outside [0, %d]", ErrInvalidConfig, c.MaxUpload, int64(MaxMaxUpload)))
	}
	return errors.Join(errs...)
}

func (c *Config) setDefaults() {
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.MaxUpload == 0 {
		c.MaxUpload = DefaultMaxUpload
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.PeerClient == nil {
		c.PeerClient = &http.Client{Timeout: 5 * time.Second}
	}
}

// Console is the console's HTTP handler. Mount it, without stripping the
// prefix, at Prefix. It is safe for concurrent use.
type Console struct {
	cfg      Config
	log      *slog.Logger
	backend  backendHolder
	sessions *sessions
	failures *failures
	verified verifiedTimes
	history  *history
	events   *eventTail
	static   http.Handler
	api      *http.ServeMux
}

var _ http.Handler = (*Console)(nil)

// New returns the console, or the problems with cfg.
func New(cfg Config) (*Console, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	c := &Console{
		cfg:      cfg,
		log:      cfg.Logger.With("component", "console"),
		sessions: newSessions(cfg.IdleTimeout, cfg.MaxSessions, cfg.Now),
		failures: newFailures(cfg.Now),
		verified: verifiedTimes{m: map[verifiedKey]time.Time{}},
		history:  newHistory(HistoryWindow, PollInterval, cfg.Now),
		events:   newEventTail(cfg.Events, cfg.Now),
		static:   http.StripPrefix(strings.TrimSuffix(Prefix, "/"), http.FileServerFS(sub)),
		api:      http.NewServeMux(),
	}
	c.backend.set(cfg.Backend)
	for _, rt := range c.routes() {
		c.api.Handle(rt.method+" "+Prefix+"api/"+rt.path, c.wrap(rt))
	}
	c.api.Handle(Prefix+"api/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errNoRoute)
	}))
	return c, nil
}

// SetBackend sets the handler console calls are served by.
func (c *Console) SetBackend(h http.Handler) { c.backend.set(h) }

// Close stops the console's background followers.
func (c *Console) Close() { c.events.close() }

// ServeHTTP serves the pages and the JSON API.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	switch {
	case r.URL.Path == strings.TrimSuffix(Prefix, "/"):
		http.Redirect(w, r, Prefix, http.StatusFound)
	case !strings.HasPrefix(r.URL.Path, Prefix):
		writeError(w, errNoRoute)
	case strings.HasPrefix(r.URL.Path, Prefix+"api/"):
		h.Set("Cache-Control", "no-store")
		c.api.ServeHTTP(w, r)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		writeError(w, errNoRoute)
	case strings.Contains(r.URL.Path, ".."):
		writeError(w, errBadPath)
	default:
		c.static.ServeHTTP(w, r)
	}
}
