// Package s3api owns the S3 HTTP surface: the route table, SigV4
// authentication (package sigv4), the XML codec and the mapping of domain
// errors to S3 errors, done once at the edge. It translates between HTTP and
// the object layer (internal/objects) and holds no state of its own.
package s3api

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/twinlake/twinlake/internal/httprec"
	"github.com/twinlake/twinlake/internal/iam/policy"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/s3api/sigv4"
	"github.com/twinlake/twinlake/internal/trace"
)

// Observer records per-request metrics; internal/metrics implements it.
type Observer interface {
	Observe(api string, status int, dur time.Duration, bytesIn, bytesOut int64)
}

// Config holds the collaborators of the S3 edge.
type Config struct {
	Objects  *objects.Layer
	Verifier *sigv4.Verifier
	Trace    *trace.Bus
	Metrics  Observer // optional
	Logger   *slog.Logger
	// Region is reported by GetBucketLocation. Default us-east-1.
	Region string
	// Domain enables virtual-host style requests for BUCKET.Domain.
	Domain string
	// WriteGuard, when set, may refuse any client write (object or bucket
	// setting) to a bucket; its error is answered AccessDenied with its
	// text. The Tables replica refuses writes to warehouses this way.
	WriteGuard func(ctx context.Context, bucket string) error
	// Denied, when set, names access keys that may not use the S3 API at
	// all (the site-replication service credential).
	Denied func(accessKey string) bool
	// Authorizer decides each request by IAM and bucket policies. Nil
	// allows every signed request and refuses anonymous ones.
	Authorizer Authorizer
	// STS, when set, answers AssumeRole at POST / (sts.go). Nil leaves
	// POST / unrouted.
	STS SessionIssuer
}

// Validate reports every missing collaborator at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Objects == nil {
		errs = append(errs, errors.New("s3api: Objects is required"))
	}
	if c.Verifier == nil {
		errs = append(errs, errors.New("s3api: Verifier is required"))
	}
	if c.Trace == nil {
		errs = append(errs, errors.New("s3api: Trace is required"))
	}
	return errors.Join(errs...)
}

// Server is the S3 API http.Handler.
type Server struct {
	cfg            Config
	timeouts       bodyTimeouts
	ssec           ssecPolicy
	obj            *objects.Layer
	log            *slog.Logger
	bucketPolicies policy.BucketCache
	aclPolicies    aclPolicyCache // bucket policies with bucket ACLs (acl.go)
}

// New builds the S3 handler.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Server{cfg: cfg, obj: cfg.Objects, log: cfg.Logger.With("component", "s3api")}, nil
}

// request is one S3 call being served.
type request struct {
	w      *httprec.Recorder
	r      *http.Request
	ctx    context.Context
	bucket string
	key    string
	query  url.Values
	auth   *sigv4.Result
	id     string
	api    string
	start  time.Time // when it came
}

// ServeHTTP authenticates, routes and serves one S3 request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &httprec.Recorder{ResponseWriter: w}
	if r.Body != nil && r.Body != http.NoBody {
		// Wrap the body on a copy of the request: net/http recognises an
		// unread Expect: 100-continue body by its own type on the request
		// it handed out, and closes the connection instead of waiting for
		// a body the client holds back until told to continue.
		r = r.WithContext(r.Context())
		idle, total := s.bodyTimeouts()
		r.Body = truncatedBody{newDeadlineBody(w, r.Body, idle, total, start)}
	}
	req := &request{w: sw, r: r, ctx: r.Context(), query: r.URL.Query(), id: httprec.NewRequestID(), api: "Unknown", start: start}
	sw.Header().Set("x-amz-request-id", req.id)
	sw.Header().Set("Server", "twinlake")
	req.bucket, req.key = s.splitPath(r)
	var err error
	switch {
	case r.Method == http.MethodOptions:
		err = s.servePreflight(req) // CORS preflight: never authenticated (cors.go)
	case s.isPostObject(req):
		err = s.postObject(req) // browser POST upload, signed in its form (postpolicy.go)
	case s.isSTS(req):
		s.serveSTS(req)
	default:
		s.addCORSHeaders(req)
		err = s.serve(req)
	}
	if err != nil {
		s.writeError(req, err)
	}
	req.record()
	s.observe(req, start, err)
}

func (s *Server) serve(req *request) error {
	if !utf8.ValidString(req.key) {
		// No object can have such a key (ValidateKey): the URI itself is
		// wrong, whatever the request.
		return errInvalidURI
	}
	// Authenticate before routing, as S3 does: an unsigned request learns
	// nothing about which APIs exist.
	res, err := s.cfg.Verifier.Verify(req.r, "s3")
	if err != nil {
		return err
	}
	if res.Anonymous && s.cfg.Authorizer == nil || s.cfg.Denied != nil && s.cfg.Denied(res.AccessKey) {
		return errAccessDenied
	}
	req.auth = res
	rt := matchRoute(req)
	if rt == nil {
		if res.Anonymous {
			return errAccessDenied
		}
		return errNotImplemented
	}
	req.api = rt.api
	if err := s.authorize(req, rt); err != nil {
		return err
	}
	if err := checkProtections(req.r.Header, rt.api); err != nil {
		return err
	}
	if err := checkExpectedOwner(req); err != nil {
		return err
	}
	if s.cfg.WriteGuard != nil && req.bucket != "" && isWrite(rt) {
		if err := s.cfg.WriteGuard(req.r.Context(), req.bucket); err != nil {
			return apiErr("AccessDenied", http.StatusForbidden, err.Error())
		}
	}
	return rt.handler(s, req)
}

// isWrite reports whether a route changes a bucket or its objects.
func isWrite(rt *route) bool {
	switch rt.method {
	case http.MethodGet, http.MethodHead:
		return false
	}
	return rt.api != "CreateBucket"
}

// splitPath extracts bucket and key from a path-style URL, or from the
// Host header for virtual-host style under the configured domain.
func (s *Server) splitPath(r *http.Request) (bucket, key string) {
	p := r.URL.Path
	if s.cfg.Domain != "" {
		host := r.Host
		if i := strings.LastIndexByte(host, ':'); i > 0 && !strings.Contains(host[i:], "]") {
			host = host[:i]
		}
		if strings.HasSuffix(host, "."+s.cfg.Domain) {
			return strings.TrimSuffix(host, "."+s.cfg.Domain), strings.TrimPrefix(p, "/")
		}
	}
	p = strings.TrimPrefix(p, "/")
	bucket, key, _ = strings.Cut(p, "/")
	return bucket, key
}

func (s *Server) observe(req *request, start time.Time, err error) {
	dur := time.Since(start)
	status := req.w.Status
	if status == 0 {
		status = http.StatusOK
	}
	var in int64
	if req.r.ContentLength > 0 {
		in = req.r.ContentLength
	}
	if s.cfg.Metrics != nil {
		s.cfg.Metrics.Observe(req.api, status, dur, in, req.w.Bytes)
	}
	if !s.cfg.Trace.Enabled(trace.S3) {
		return
	}
	ev := trace.Event{
		Type: trace.S3, Time: start, FuncName: "s3." + req.api, Path: req.r.URL.Path,
		Method: req.r.Method, StatusCode: status, Duration: dur, RemoteAddr: req.r.RemoteAddr,
		BytesIn: in, BytesOut: req.w.Bytes,
	}
	if req.r.URL.RawQuery != "" {
		ev.Attrs = map[string]string{"query": req.r.URL.RawQuery}
	}
	// A body sent in signed chunks (aws-chunked) is longer than the
	// object: its length as decoded is the object's size.
	if dl := req.r.Header.Get("X-Amz-Decoded-Content-Length"); dl != "" {
		if ev.Attrs == nil {
			ev.Attrs = map[string]string{}
		}
		ev.Attrs["decodedLength"] = dl
	}
	if err != nil {
		ev.Error = err.Error()
	}
	s.cfg.Trace.Publish(ev)
}

func (s *Server) writeError(req *request, err error) {
	ae := toAPIError(err)
	switch {
	case ae != errInternal:
	case req.w.Status != 0 && clientGone(req.r, err):
		// The client hung up during the body: nothing failed here.
		s.log.Debug("client went away during the answer", "api", req.api, "bucket", req.bucket, "key", req.key,
			"sent", req.w.Bytes, "err", err)
	default:
		s.log.Error("internal error", "api", req.api, "bucket", req.bucket, "key", req.key, "err", err)
	}
	if req.w.Status != 0 {
		return // the body is under way; the client sees a short read
	}
	if ae == errRequestTimeout {
		req.w.Header().Set("Connection", "close")
	}
	if ae.Status == http.StatusServiceUnavailable {
		req.w.Header().Set("Retry-After", "1")
	}
	// A GET that failed after setting the object's headers (its data
	// could not be opened) answers the error, not a body framed and
	// described as the object.
	for _, h := range objectBodyHeaders {
		req.w.Header().Del(h)
	}
	body := errorResponse{Code: ae.Code, Message: ae.Message, Resource: req.r.URL.Path, RequestID: req.id, Key: req.key, Bucket: req.bucket}
	if req.r.Method == http.MethodHead {
		req.w.WriteHeader(ae.Status)
		return
	}
	writeXML(req.w, ae.Status, body)
}

// clientGone reports whether err is the client's connection ending (it
// closed or reset it, or the server saw it go and ended the request), not
// a failure on this side.
func clientGone(r *http.Request, err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed) ||
		r.Context().Err() != nil
}

// objectBodyHeaders describe an object's body; an error answer drops
// them.
var objectBodyHeaders = []string{"Content-Length", "Content-Range", "Content-Encoding", "Content-Disposition",
	"Content-Language", "Cache-Control", "Expires", "ETag", "Last-Modified"}

// writeXML writes v as an XML document with status.
func writeXML(w http.ResponseWriter, status int, v any) {
	buf := xmlBuffer()
	defer releaseXML(buf)
	buf.WriteString(xml.Header)
	if err := xml.NewEncoder(buf).Encode(v); err != nil {
		http.Error(w, "xml encoding failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// xmlBuffers hold the buffers XML answers (and a listing's entries) are
// written into, so that a listing's page (about 400 KB for 1,000 keys)
// does not grow a new one from nothing each time; one grown past
// maxPooledXML is left to the GC.
var xmlBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledXML = 4 << 20

// xmlBuffer takes an empty buffer from xmlBuffers; releaseXML gives it
// back once nothing refers to its bytes.
func xmlBuffer() *bytes.Buffer { return xmlBuffers.Get().(*bytes.Buffer) }

func releaseXML(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledXML {
		buf.Reset()
		xmlBuffers.Put(buf)
	}
}

// writeStoredXML answers 200 with doc, an XML document kept encoded (a
// bucket's CORS or lifecycle configuration), behind the XML declaration.
func writeStoredXML(w http.ResponseWriter, doc []byte) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, xml.Header)
	w.Write(doc)
}

// truncatedBody reports a body that ends before its declared length (the
// client hung up mid-upload) as IncompleteBody, a client error, instead of
// the bare io.ErrUnexpectedEOF net/http returns, which would surface as an
// InternalError.
type truncatedBody struct{ io.ReadCloser }

func (b truncatedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("%w: request body ended early: %w", objects.ErrIncompleteBody, err)
	}
	return n, err
}
