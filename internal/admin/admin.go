// Package admin owns twinlake's admin HTTP API under /twinlake/admin/v1/:
// server info, runtime configuration and the live trace stream. Every call
// must be signed by an administrator; answers and errors are JSON (the wire
// types live in internal/adminclient), and every call is itself traced as a
// trace.Admin event.
package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/httprec"
	"github.com/twinlake/twinlake/internal/trace"
)

// Authenticator verifies who signed a request. internal/app implements it
// over the server's SigV4 verifier and IAM.
type Authenticator interface {
	// Authenticate returns the access key that signed r, or an error if r is
	// unsigned or its signature does not verify. If it reads r.Body it must
	// put back a replay: the config handler reads the body afterwards and
	// checks it against X-Amz-Content-Sha256 itself.
	Authenticate(r *http.Request) (accessKey string, err error)
	// IsAdmin reports whether accessKey may use the admin API (root, or a
	// user with the admin policy).
	IsAdmin(accessKey string) bool
}

// InfoSource reports the site's identity and usage for the info call.
type InfoSource interface {
	Info(ctx context.Context) (adminclient.ServerInfo, error)
}

// Config holds the collaborators and settings of a Server.
type Config struct {
	Auth     Authenticator // required
	Settings *config.Store // required
	Trace    *trace.Bus    // required: streamed to clients, and admin calls published on it
	Info     InfoSource    // required
	Logger   *slog.Logger  // default: discard
	// RemoteTrace, when set, streams the events of the site's other
	// nodes that match a filter, until ctx ends: a trace stream then
	// follows every node of a multi-node site.
	RemoteTrace func(ctx context.Context, f trace.Filter) <-chan trace.Event
	// Tables manages warehouses; nil answers the warehouse calls with
	// NotImplemented (501).
	Tables TablesAdmin
	// Replication runs site replication; nil answers its calls with
	// NotImplemented.
	Replication ReplicationAdmin
	// TablesReplication runs the Tables replica (scanner, failover,
	// resync, reset, backfill); nil answers its calls with NotImplemented.
	TablesReplication TablesReplication
	// Identities manages users, groups, policies and access keys; nil
	// answers those calls with NotImplemented.
	Identities IdentityAdmin
	// Heal checks stored data against the metadata; nil answers the heal
	// call with NotImplemented.
	Heal Healer
	// Quotas reads and sets bucket quotas; nil answers those calls with
	// NotImplemented.
	Quotas Quotas

	// TraceBuffer is how many events a slow trace client may lag behind
	// before it loses events. Default 4096.
	TraceBuffer int
	// KeepAlive is how often an idle trace stream sends a blank line, so
	// that proxies keep it open and a vanished client is noticed. Default 15s.
	KeepAlive time.Duration
	// MaxBodyBytes bounds request bodies. Default 1 MiB.
	MaxBodyBytes int64
}

// Validate reports every missing collaborator and bad setting at once.
func (c *Config) Validate() error {
	var errs []error
	for _, req := range []struct {
		missing bool
		name    string
	}{
		{c.Auth == nil, "Auth"}, {c.Settings == nil, "Settings"},
		{c.Trace == nil, "Trace"}, {c.Info == nil, "Info"},
	} {
		if req.missing {
			errs = append(errs, fmt.Errorf("%w: %s is required", ErrInvalidConfig, req.name))
		}
	}
	if c.TraceBuffer < 0 || c.KeepAlive < 0 || c.MaxBodyBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: TraceBuffer, KeepAlive and MaxBodyBytes must not be negative", ErrInvalidConfig))
	}
	return errors.Join(errs...)
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.TraceBuffer == 0 {
		c.TraceBuffer = 4096
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = 15 * time.Second
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = 1 << 20
	}
}

// Server is the admin API handler. Mount it, without stripping the prefix,
// at adminclient.PathPrefix. It is safe for concurrent use.
type Server struct {
	cfg Config
	log *slog.Logger
	mux *http.ServeMux
}

var _ http.Handler = (*Server)(nil)

// call is what a handler may add to the trace event of its call, and who
// made it.
type call struct {
	msg       string
	accessKey string
}

// handler serves one route. It returns errors rather than writing them, so
// that they are translated once, by writeError.
type handler func(s *Server, w http.ResponseWriter, r *http.Request, c *call) error

// route is one admin API call. Name is the funcname of its trace event.
type route struct {
	method, pattern, name string
	h                     handler
}

// routes is the core of the admin API; each capability adds its own table
// (tablesRoutes, replicationRoutes) in its own file.
var routes = []route{
	{http.MethodGet, adminclient.PathInfo, "admin.ServerInfo", (*Server).serverInfo},
	{http.MethodGet, adminclient.PathConfig + "/{subsys}", "admin.GetConfig", (*Server).getConfig},
	{http.MethodPut, adminclient.PathConfig + "/{subsys}", "admin.SetConfig", (*Server).setConfig},
	{http.MethodGet, adminclient.PathTrace, "admin.Trace", (*Server).traceStream},
}

// allRoutes is every admin call: the core's and each capability's table.
func allRoutes() []route {
	var all []route
	for _, t := range [][]route{routes, tablesRoutes, tablesUndropRoutes, tablesMaintenanceRoutes, tablesReplRoutes,
		replicationRoutes, iamRoutes, healRoutes, profileRoutes, quotaRoutes} {
		all = append(all, t...)
	}
	return all
}

// New returns the admin API handler, or the problems with cfg.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	s := &Server{cfg: cfg, log: cfg.Logger.With("component", "admin"), mux: http.NewServeMux()}
	for _, rt := range allRoutes() {
		s.mux.Handle(rt.method+" "+rt.pattern, s.wrap(rt.name, rt.h))
	}
	s.mux.Handle(adminclient.PathPrefix, s.wrap("admin.NotFound", func(*Server, http.ResponseWriter, *http.Request, *call) error {
		return ErrNoRoute
	}))
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// wrap authorizes, runs h, answers its error and traces the call.
func (s *Server) wrap(name string, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &httprec.Recorder{ResponseWriter: w}
		c := &call{}
		err := s.authorize(r, name, c)
		if err == nil {
			err = h(s, rec, r, c)
		}
		if err != nil && rec.Status == 0 {
			s.writeError(rec, r, err)
		}
		if s.cfg.Trace.Enabled(trace.Admin) {
			ev := trace.Event{
				Type: trace.Admin, Time: start, FuncName: name, Path: r.URL.Path, Method: r.Method,
				StatusCode: rec.Status, Duration: time.Since(start), RemoteAddr: r.RemoteAddr,
				BytesIn: max(r.ContentLength, 0), BytesOut: rec.Bytes, Msg: c.msg,
			}
			if err != nil {
				ev.Error = err.Error()
			}
			s.cfg.Trace.Publish(ev)
		}
	})
}

// authorize authenticates the caller and checks the call's action (see
// routeActions) with the Authenticator's ActionAuthorizer, or, lacking
// one, that the caller is an administrator.
func (s *Server) authorize(r *http.Request, name string, c *call) error {
	key, err := s.cfg.Auth.Authenticate(r)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	case key == "":
		return ErrUnauthenticated
	}
	c.accessKey = key
	if az, ok := s.cfg.Auth.(ActionAuthorizer); ok {
		action := routeAction(name)
		if az.AllowAdmin(key, action) {
			return nil
		}
		if ta, ok := warehouseActions[name]; ok {
			if ra, ok := s.cfg.Auth.(ResourceAuthorizer); ok && ra.AllowAdminOn(key, ta, warehouseResource(r)) {
				return nil
			}
			return fmt.Errorf("%w: %s may not perform %s, nor %s on %s", ErrAccessDenied, key, action, ta, warehouseResource(r))
		}
		return fmt.Errorf("%w: %s may not perform %s", ErrAccessDenied, key, action)
	}
	if !s.cfg.Auth.IsAdmin(key) {
		return fmt.Errorf("%w: %s is not an administrator", ErrAccessDenied, key)
	}
	return nil
}
