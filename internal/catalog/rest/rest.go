// Package rest is the HTTP edge of the Iceberg catalog: the Apache Iceberg
// REST catalog API under /_iceberg/v1, signed with SigV4 (service s3tables).
// It owns the route table, the Iceberg JSON wire types (decoded with
// apache/iceberg-go's metadata, requirement and update types), the mapping
// of domain errors to the Iceberg error model, and the trace events and
// metrics of every call. The catalog itself is internal/catalog.
package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/httprec"
	"github.com/twinlake/twinlake/internal/trace"
)

// PathPrefix is where the API is mounted; the spec's /v1 follows it.
const PathPrefix = "/_iceberg/"

// apiRoot is the path every route is relative to.
const apiRoot = PathPrefix + "v1/"

// SigningService is the SigV4 service name requests are signed for.
const SigningService = "s3tables"

// Authenticator verifies who signed a request. internal/app implements it
// over the server's SigV4 verifier for service s3tables.
type Authenticator interface {
	// Authenticate returns the access key that signed r. On success r.Body
	// reads the payload checked against its signed hash. It returns an error
	// wrapping ErrUnauthenticated for an unsigned request and ErrForbidden
	// for a signature that does not verify.
	Authenticate(r *http.Request) (accessKey string, err error)
}

// Config holds the collaborators and settings of a Server.
type Config struct {
	Catalog    *catalog.Catalog      // required
	Auth       Authenticator         // required
	Trace      *trace.Bus            // required: every call is a trace.Tables event
	Registerer prometheus.Registerer // required: catalog metrics
	Logger     *slog.Logger          // default: discard
	// MaxBodyBytes bounds request bodies. Default 32 MiB.
	MaxBodyBytes int64
	// Region is advertised to engines as s3.region. Default us-east-1.
	Region string
	// WriteGuard, when set, may refuse every catalog change in a warehouse
	// (the Tables replica refuses them); its error is answered 403
	// ForbiddenException with its text.
	WriteGuard func(ctx context.Context, warehouse string) error
}

// Validate reports every missing collaborator at once.
func (c *Config) Validate() error {
	var errs []error
	for _, req := range []struct {
		missing bool
		name    string
	}{
		{c.Catalog == nil, "Catalog"}, {c.Auth == nil, "Auth"}, {c.Trace == nil, "Trace"},
		{c.Registerer == nil, "Registerer"},
	} {
		if req.missing {
			errs = append(errs, fmt.Errorf("catalog/rest: %s is required", req.name))
		}
	}
	if c.MaxBodyBytes < 0 {
		errs = append(errs, errors.New("catalog/rest: MaxBodyBytes must not be negative"))
	}
	return errors.Join(errs...)
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = 32 << 20
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
}

// Server is the Iceberg REST handler. Mount it, without stripping the
// prefix, at PathPrefix. It is safe for concurrent use.
type Server struct {
	cfg     Config
	cat     *catalog.Catalog
	log     *slog.Logger
	metrics *serverMetrics
	keys    *keyLocks // Idempotency-Key serialisation
	refs    *refsCache
	// signCreds holds the credentials remote signing signs with (sign.go).
	signCreds signCredCache
}

var _ http.Handler = (*Server)(nil)

// New returns the handler, or the problems with cfg.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	m, err := newServerMetrics(cfg.Registerer, cfg.Catalog)
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, cat: cfg.Catalog, log: cfg.Logger.With("component", "catalog-rest"), metrics: m,
		keys: &keyLocks{seed: maphash.MakeSeed()}, refs: newRefsCache(64)}, nil
}

// call is one request being served: its route parameters and what the
// handler adds to the trace event.
type call struct {
	params map[string]string
	key    string // the caller's access key
	msg    string
	// ref is set by a mutation answering a table's or view's load result:
	// its recorded idempotent answer is the metadata file, not the body.
	ref *answerRef
	// vended is set when the answer carries vended credentials: they are
	// never recorded as an idempotent answer (vending.go).
	vended bool
}

// answerRef names the metadata file a load result carries.
type answerRef struct{ kind, location string }

// handler serves one route; it returns errors rather than writing them.
type handler func(s *Server, w http.ResponseWriter, r *http.Request, c *call) error

// route is one endpoint; name is the funcname of its trace event.
type route struct {
	method, pattern, name string
	h                     handler
	segs                  []string
}

// routes is the API, with the spec's path parameter names.
var routes = []route{
	{method: http.MethodGet, pattern: "config", name: "tables.GetConfig", h: (*Server).getConfig},
	{method: http.MethodGet, pattern: "{prefix}/namespaces", name: "tables.ListNamespaces", h: (*Server).listNamespaces},
	{method: http.MethodPost, pattern: "{prefix}/namespaces", name: "tables.CreateNamespace", h: (*Server).createNamespace},
	{method: http.MethodGet, pattern: "{prefix}/namespaces/{namespace}", name: "tables.LoadNamespace", h: (*Server).loadNamespace},
	{method: http.MethodHead, pattern: "{prefix}/namespaces/{namespace}", name: "tables.NamespaceExists", h: (*Server).namespaceExists},
	{method: http.MethodDelete, pattern: "{prefix}/namespaces/{namespace}", name: "tables.DropNamespace", h: (*Server).dropNamespace},
	{method: http.MethodPost, pattern: "{prefix}/namespaces/{namespace}/properties", name: "tables.UpdateNamespaceProperties", h: (*Server).updateNamespace},
	{method: http.MethodGet, pattern: "{prefix}/namespaces/{namespace}/tables", name: "tables.ListTables", h: (*Server).listTables},
	{method: http.MethodPost, pattern: "{prefix}/namespaces/{namespace}/tables", name: "tables.CreateTable", h: (*Server).createTable},
	{method: http.MethodGet, pattern: "{prefix}/namespaces/{namespace}/tables/{table}", name: "tables.LoadTable", h: (*Server).loadTable},
	{method: http.MethodHead, pattern: "{prefix}/namespaces/{namespace}/tables/{table}", name: "tables.TableExists", h: (*Server).tableExists},
	{method: http.MethodPost, pattern: "{prefix}/namespaces/{namespace}/tables/{table}", name: "tables.CommitTable", h: (*Server).commitTable},
	{method: http.MethodDelete, pattern: "{prefix}/namespaces/{namespace}/tables/{table}", name: "tables.DropTable", h: (*Server).dropTable},
	{method: http.MethodGet, pattern: "{prefix}/namespaces/{namespace}/tables/{table}/credentials", name: "tables.LoadCredentials", h: (*Server).loadCredentials},
	{method: http.MethodPost, pattern: "{prefix}/namespaces/{namespace}/tables/{table}/metrics", name: "tables.ReportMetrics", h: (*Server).reportMetrics},
	{method: http.MethodPost, pattern: "{prefix}/namespaces/{namespace}/tables/{table}/sign", name: "tables.SignRequest", h: (*Server).signS3Request},
	{method: http.MethodPost, pattern: "{prefix}/namespaces/{namespace}/register", name: "tables.RegisterTable", h: (*Server).registerTable},
	{method: http.MethodPost, pattern: "{prefix}/tables/rename", name: "tables.RenameTable", h: (*Server).renameTable},
	{method: http.MethodPost, pattern: "{prefix}/transactions/commit", name: "tables.CommitTransaction", h: (*Server).commitTransaction},
	{method: http.MethodGet, pattern: "{prefix}/namespaces/{namespace}/views", name: "tables.ListViews", h: (*Server).listViews},
	{method: http.MethodPost, pattern: "{prefix}/namespaces/{namespace}/views", name: "tables.CreateView", h: (*Server).createView},
	{method: http.MethodGet, pattern: "{prefix}/namespaces/{namespace}/views/{view}", name: "tables.LoadView", h: (*Server).loadView},
	{method: http.MethodHead, pattern: "{prefix}/namespaces/{namespace}/views/{view}", name: "tables.ViewExists", h: (*Server).viewExists},
	{method: http.MethodPost, pattern: "{prefix}/namespaces/{namespace}/views/{view}", name: "tables.ReplaceView", h: (*Server).replaceView},
	{method: http.MethodDelete, pattern: "{prefix}/namespaces/{namespace}/views/{view}", name: "tables.DropView", h: (*Server).dropView},
	{method: http.MethodPost, pattern: "{prefix}/views/rename", name: "tables.RenameView", h: (*Server).renameView},
}

// unserved are the spec's endpoints this server does not serve: they are
// answered 406 UnsupportedOperationException (an unknown path is 404).
var unserved = []string{
	"oauth/tokens",
	"{prefix}/namespaces/{namespace}/functions",
	"{prefix}/namespaces/{namespace}/functions/{function}",
	"{prefix}/namespaces/{namespace}/tables/{table}/plan",
	"{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
	"{prefix}/namespaces/{namespace}/tables/{table}/tasks",
	"{prefix}/namespaces/{namespace}/tables/{table}/unregister",
	"{prefix}/namespaces/{namespace}/register-view",
}

var unservedSegs [][]string

// advertised is the endpoint list the config call returns ("METHOD
// /v1/path"), built from the route table: exactly what is served.
var advertised []string

func init() {
	for i := range routes {
		routes[i].segs = strings.Split(routes[i].pattern, "/")
		if routes[i].pattern != "config" {
			advertised = append(advertised, routes[i].method+" /v1/"+routes[i].pattern)
		}
	}
	for _, p := range unserved {
		unservedSegs = append(unservedSegs, strings.Split(p, "/"))
	}
}

// match finds the route of a request path (escaped, relative to apiRoot).
// Each segment is unescaped on its own, so "%2F" inside a name stays data.
func match(method, escapedRel string) (*route, map[string]string, error) {
	raw := strings.Split(escapedRel, "/")
	segs := make([]string, len(raw))
	for i, s := range raw {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: bad path escape %q", errBadRequest, s)
		}
		segs[i] = u
	}
	pathFound := false
	for i := range routes {
		rt := &routes[i]
		params, ok := matchSegs(rt.segs, segs)
		if !ok {
			continue
		}
		pathFound = true
		if rt.method == method {
			return rt, params, nil
		}
	}
	if pathFound {
		return nil, nil, fmt.Errorf("%w: %s", errMethod, method)
	}
	for _, p := range unservedSegs {
		if _, ok := matchSegs(p, segs); ok {
			return nil, nil, fmt.Errorf("%w: %s /v1/%s", errUnsupported, method, strings.Join(p, "/"))
		}
	}
	return nil, nil, fmt.Errorf("%w: /v1/%s", errNoRoute, escapedRel)
}

func matchSegs(pattern, segs []string) (map[string]string, bool) {
	if len(pattern) != len(segs) {
		return nil, false
	}
	var params map[string]string
	for i, p := range pattern {
		if strings.HasPrefix(p, "{") {
			if params == nil {
				params = map[string]string{}
			}
			params[strings.Trim(p, "{}")] = segs[i]
			continue
		}
		if p != segs[i] {
			return nil, false
		}
	}
	return params, true
}

// ServeHTTP authenticates, routes, runs the handler, answers its error in
// the Iceberg error model, and traces and measures the call.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &httprec.Recorder{ResponseWriter: w}
	c := &call{}
	name := "tables.Unknown"
	rel, _ := strings.CutPrefix(r.URL.EscapedPath(), apiRoot)
	rt, params, err := match(r.Method, rel)
	if rt != nil {
		name, c.params = rt.name, params
	}
	if err == nil {
		var key string
		if key, err = s.authenticate(r); err == nil {
			c.key = key
			err = s.authorize(r, rt, c, key)
		}
	}
	if err == nil && s.cfg.WriteGuard != nil && isChange(rt) {
		if gerr := s.cfg.WriteGuard(r.Context(), c.params["prefix"]); gerr != nil {
			err = fmt.Errorf("%w: %v", errReadOnly, gerr)
		}
	}
	if err == nil {
		if key := r.Header.Get(headerIdempotencyKey); key != "" && isChange(rt) {
			err = s.serveIdempotent(rec, r, rt, c, key)
		} else {
			err = rt.h(s, rec, r, c)
		}
	}
	if err != nil && rec.Status == 0 {
		s.writeError(rec, r, err)
	}
	dur := time.Since(start)
	s.metrics.observe(name, rec.Status, dur, errors.Is(err, catalog.ErrCommitFailed))
	if s.cfg.Trace.Enabled(trace.Tables) {
		ev := trace.Event{
			Type: trace.Tables, Time: start, FuncName: name, Path: r.URL.Path, Method: r.Method,
			StatusCode: rec.Status, Duration: dur, RemoteAddr: r.RemoteAddr,
			BytesIn: max(r.ContentLength, 0), BytesOut: rec.Bytes, Msg: c.msg,
		}
		if err != nil {
			ev.Error = err.Error()
		}
		s.cfg.Trace.Publish(ev)
	}
}

// isChange reports whether a route changes the catalog.
func isChange(rt *route) bool {
	switch rt.method {
	case http.MethodGet, http.MethodHead:
		return false
	}
	return rt.name != "tables.ReportMetrics" && rt.name != "tables.SignRequest"
}

func (s *Server) authenticate(r *http.Request) (string, error) {
	key, err := s.cfg.Auth.Authenticate(r)
	if err != nil {
		return "", err
	}
	if key == "" {
		return "", ErrUnauthenticated
	}
	return key, nil
}

// writeError answers err in the Iceberg error model.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	body, internal := classify(err)
	if internal {
		s.log.Error("catalog call failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if body.Error.Code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(body.Error.Code)
		return
	}
	writeJSON(w, body.Error.Code, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":{"message":"encode response","type":"InternalServerError","code":500}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// writeLoad answers 200 with a load result. The metadata is written as
// stored, not re-encoded: json.Marshal would re-validate and compact
// megabytes of metadata on every load of a table with many snapshots.
func writeLoad(w http.ResponseWriter, lr loadResponse) {
	loc, _ := json.Marshal(lr.MetadataLocation)
	var buf bytes.Buffer
	buf.Grow(len(lr.Metadata) + len(loc) + 64)
	buf.WriteByte('{')
	if lr.MetadataLocation != "" { // a staged create has none
		buf.WriteString(`"metadata-location":`)
		buf.Write(loc)
		buf.WriteByte(',')
	}
	buf.WriteString(`"metadata":`)
	buf.Write(lr.Metadata)
	if lr.Config != nil {
		cfg, _ := json.Marshal(lr.Config)
		buf.WriteString(`,"config":`)
		buf.Write(cfg)
	}
	if lr.StorageCredentials != nil {
		sc, _ := json.Marshal(lr.StorageCredentials)
		buf.WriteString(`,"storage-credentials":`)
		buf.Write(sc)
	}
	buf.WriteByte('}')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

// readJSON decodes a bounded body into v: one JSON value, nothing after it.
func (s *Server) readJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		return fmt.Errorf("%w: read body: %v", errBadRequest, err)
	}
	return decodeBody(body, v)
}

// decodeBody decodes exactly one JSON value; the fuzz target drives it.
func decodeBody(body []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: invalid JSON body: %v", errBadRequest, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: trailing data after the JSON body", errBadRequest)
	}
	return nil
}
