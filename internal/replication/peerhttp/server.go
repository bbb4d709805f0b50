package peerhttp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/twinlake/twinlake/internal/httprec"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/replication"
	"github.com/twinlake/twinlake/internal/replication/peerwire"
	"github.com/twinlake/twinlake/internal/trace"
)

// Authenticator verifies a peer request's SigV4 signature.
type Authenticator interface {
	// Verify returns the access key that signed r and a reader of its body
	// that fails unless the body is the signed one.
	Verify(r *http.Request) (accessKey string, body io.ReadCloser, err error)
	// IsAdmin reports whether accessKey is an administrator.
	IsAdmin(accessKey string) bool
}

// Config holds a Server's collaborators.
type Config struct {
	Engine *replication.Engine // required
	Auth   Authenticator       // required
	Trace  *trace.Bus          // required
	Logger *slog.Logger
	// InboundGuard, when set, may refuse replication into a bucket (the
	// Tables roles refuse warehouse replication on a non-replica): its error
	// is answered 403.
	InboundGuard func(ctx context.Context, bucket string) error
	// CatalogExport, when set, answers the Tables catalog export a
	// rebuilding replica asks for.
	CatalogExport func(ctx context.Context) ([]byte, error)
	// MaxMetaBytes bounds the non-data bodies. Default 1 MiB.
	MaxMetaBytes int64
	// Nodes are the site's nodes (host:port) when it has several: the
	// health answer tells them, and a peer calls another of them when
	// the one it joined through does not answer.
	Nodes []string
}

// Server serves the peer API. Mount it, without stripping the prefix, at
// Prefix.
type Server struct {
	cfg Config
	mux *http.ServeMux
}

// errForbidden is a refused caller or guard.
var errForbidden = errors.New("forbidden")

// NewServer returns the peer API handler.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Engine == nil || cfg.Auth == nil || cfg.Trace == nil {
		return nil, errors.New("peerhttp: Engine, Auth and Trace are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxMetaBytes == 0 {
		cfg.MaxMetaBytes = 1 << 20
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux()}
	for _, rt := range []struct {
		method, path, name string
		typ                trace.Type
		h                  func(http.ResponseWriter, *http.Request, io.Reader, *string) error
	}{
		{http.MethodGet, pathHealth, "peer.Health", trace.Peer, s.health},
		{http.MethodGet, pathInfo, "peer.Info", trace.Peer, s.info},
		{http.MethodPost, pathJoin, "peer.Join", trace.Peer, s.join},
		{http.MethodPut, pathVersion, "s3.ReplicationRequest", trace.S3, s.putVersion},
		{http.MethodDelete, pathVersion, "s3.ReplicationRequest", trace.S3, s.deleteVersion},
		{http.MethodPost, pathBatch, "s3.ReplicationRequest", trace.S3, s.putVersions},
		{http.MethodPut, pathBucket, "peer.Bucket", trace.Peer, s.putBucket},
		{http.MethodGet, pathDigests, "peer.Digests", trace.Peer, s.digests},
		{http.MethodGet, pathSlot, "peer.SlotVersions", trace.Peer, s.slot},
		{http.MethodPost, pathResend, "peer.Resend", trace.Peer, s.resend},
		{http.MethodGet, pathResync, "peer.ResyncStatus", trace.Peer, s.resyncTo},
		{http.MethodGet, pathCatalog, "peer.CatalogExport", trace.Peer, s.catalogExport},
		{http.MethodPut, pathIAM, "peer.IAM", trace.Peer, s.putIAM},
	} {
		s.mux.Handle(rt.method+" "+rt.path, s.wrap(rt.name, rt.typ, rt.h))
	}
	s.mux.Handle(Prefix, s.wrap("peer.NotFound", trace.Peer, func(http.ResponseWriter, *http.Request, io.Reader, *string) error {
		return errNoRoute
	}))
	return s, nil
}

var errNoRoute = errors.New("no such peer API call")

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) wrap(name string, typ trace.Type, h func(http.ResponseWriter, *http.Request, io.Reader, *string) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &httprec.Recorder{ResponseWriter: w}
		var msg string
		// The answer names this site's version whatever happens, so that
		// a caller of any version can tell why it was refused.
		w.Header().Set(peerwire.Header, strconv.Itoa(peerwire.Version))
		err := func() error {
			// The version first: nothing of a call is read, not even its
			// signature, in a protocol this site does not speak.
			caller, err := peerwire.ParseVersion(r.Header.Get(peerwire.Header))
			if err == nil {
				err = peerwire.CheckCaller(caller)
			}
			if err != nil {
				return err
			}
			key, body, err := s.cfg.Auth.Verify(r)
			if err != nil {
				return fmt.Errorf("%w: %w", errUnauthenticated, err)
			}
			defer body.Close()
			st := s.cfg.Engine.State()
			if !s.cfg.Auth.IsAdmin(key) && (st.ServiceAccessKey == "" || key != st.ServiceAccessKey) {
				return fmt.Errorf("%w: %w", errForbidden, errors.New(key+" may not call the peer API"))
			}
			return h(sw, r, body, &msg)
		}()
		if err != nil {
			writeError(sw, err)
		}
		if s.cfg.Trace.Enabled(typ) {
			ev := trace.Event{Type: typ, Time: start, FuncName: name, Path: r.URL.Path + "?" + r.URL.RawQuery, Method: r.Method,
				StatusCode: sw.Status, Duration: time.Since(start), RemoteAddr: r.RemoteAddr, BytesIn: max(r.ContentLength, 0), Msg: msg}
			if err != nil {
				ev.Error = err.Error()
			}
			s.cfg.Trace.Publish(ev)
		}
	})
}

var errUnauthenticated = errors.New("unauthenticated")

func writeError(w http.ResponseWriter, err error) {
	code, status := classify(err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(peerwire.Error{Code: code, Message: err.Error()})
}

// classify maps an error to the peer API's code and HTTP status.
func classify(err error) (string, int) {
	code, status := "InternalError", http.StatusInternalServerError
	var incompatible *peerwire.IncompatibleError
	switch {
	case errors.As(err, &incompatible) && incompatible.Caller < incompatible.Accepts.Min:
		code, status = peerwire.CodeIncompatible, http.StatusUpgradeRequired
	case errors.Is(err, peerwire.ErrIncompatible):
		code, status = peerwire.CodeIncompatible, http.StatusBadRequest
	case errors.Is(err, errUnauthenticated):
		code, status = "Unauthenticated", http.StatusUnauthorized
	case errors.Is(err, errForbidden):
		code, status = "AccessDenied", http.StatusForbidden
	case errors.Is(err, errNoRoute):
		code, status = codeNoSuchCall, http.StatusNotFound
	case errors.Is(err, objects.ErrBucketNotFound):
		code, status = "NoSuchBucket", http.StatusNotFound
	case errors.Is(err, objects.ErrBucketNotEmpty):
		code, status = "BucketNotEmpty", http.StatusConflict
	case errors.Is(err, objects.ErrBadDigest), errors.Is(err, objects.ErrIncompleteBody):
		code, status = "BadDigest", http.StatusBadRequest
	case errors.Is(err, replication.ErrNoResync):
		code, status = "NoSuchResync", http.StatusNotFound
	case errors.Is(err, replication.ErrPeerHasData):
		code, status = "SiteHasData", http.StatusConflict
	case errors.Is(err, errBadRequest), errors.Is(err, replication.ErrInvalidRequest), errors.Is(err, peerwire.ErrMalformed),
		errors.Is(err, objects.ErrInvalidKey), errors.Is(err, objects.ErrKeyTooLong),
		errors.Is(err, objects.ErrInvalidVersionID), errors.Is(err, objects.ErrInvalidBucketName):
		code, status = "InvalidRequest", http.StatusBadRequest
	}
	return code, status
}

var errBadRequest = errors.New("bad request")

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}

func writeOutcome(w http.ResponseWriter, o objects.ApplyOutcome, msg *string) error {
	*msg = o.String()
	return writeJSON(w, peerwire.Outcome{Outcome: o.String()})
}

func (s *Server) health(w http.ResponseWriter, r *http.Request, _ io.Reader, _ *string) error {
	return writeJSON(w, healthAnswer{Nodes: s.cfg.Nodes})
}

// healthAnswer is the answer to a health call: {} from a single node.
type healthAnswer struct {
	// Nodes are the site's nodes, host:port, when it has several.
	Nodes []string `json:"nodes,omitempty"`
}

func (s *Server) info(w http.ResponseWriter, r *http.Request, _ io.Reader, _ *string) error {
	return writeJSON(w, peerwire.FromInfo(s.cfg.Engine.LocalInfo(r.Context())))
}

func (s *Server) join(w http.ResponseWriter, r *http.Request, body io.Reader, msg *string) error {
	var st peerwire.State
	if err := json.NewDecoder(io.LimitReader(body, s.cfg.MaxMetaBytes)).Decode(&st); err != nil {
		return fmt.Errorf("%w: %w", errBadRequest, err)
	}
	if err := s.cfg.Engine.Join(r.Context(), st.ToState()); err != nil {
		return err
	}
	*msg = "configuration installed"
	return writeJSON(w, struct{}{})
}

func (s *Server) guard(ctx context.Context, bucket string) error {
	if s.cfg.InboundGuard == nil {
		return nil
	}
	if err := s.cfg.InboundGuard(ctx, bucket); err != nil {
		return fmt.Errorf("%w: %w", errForbidden, err)
	}
	return nil
}

func (s *Server) putVersion(w http.ResponseWriter, r *http.Request, body io.Reader, msg *string) error {
	q := r.URL.Query()
	bucket, key := q.Get("bucket"), q.Get("key")
	if err := s.guard(r.Context(), bucket); err != nil {
		return err
	}
	v, err := decodeVersionHeader(r.Header.Get(headerVersion), r.ContentLength)
	if err != nil {
		return err
	}
	out, err := s.cfg.Engine.ReceiveVersion(r.Context(), bucket, key, v, body)
	if err != nil {
		return err
	}
	return writeOutcome(w, out, msg)
}

func (s *Server) deleteVersion(w http.ResponseWriter, r *http.Request, _ io.Reader, msg *string) error {
	q := r.URL.Query()
	if err := s.guard(r.Context(), q.Get("bucket")); err != nil {
		return err
	}
	var modTime int64
	if v := q.Get("modTime"); v != "" {
		t, err := strconv.ParseInt(v, 10, 64)
		if err != nil || t < 0 {
			return fmt.Errorf("%w: modTime %q", replication.ErrInvalidRequest, v)
		}
		modTime = t
	}
	how := objects.PurgeVersion
	switch k := q.Get("kind"); k {
	case "":
	case purgeKindExpiredMarker:
		how = objects.PurgeExpiredMarker
	default:
		return fmt.Errorf("%w: purge kind %q", replication.ErrInvalidRequest, k)
	}
	out, err := s.cfg.Engine.ReceivePurge(r.Context(), q.Get("bucket"), q.Get("key"), q.Get("versionId"), modTime, how)
	if err != nil {
		return err
	}
	return writeOutcome(w, out, msg)
}

func (s *Server) putBucket(w http.ResponseWriter, r *http.Request, body io.Reader, msg *string) error {
	raw, err := readBounded(body, s.cfg.MaxMetaBytes, r.ContentLength)
	if err != nil {
		return err
	}
	var bb peerwire.BucketChange
	if err := decodeMsgpack(raw, &bb); err != nil {
		return fmt.Errorf("%w: %w", errBadRequest, err)
	}
	// A warehouse's settings follow its data: a site that takes no
	// warehouse replication (a primary, promoted or not) takes no settings
	// either, or a demoted site could undo the new primary's.
	if err := s.guard(r.Context(), bb.Bucket.Name); err != nil {
		return err
	}
	out, err := s.cfg.Engine.ReceiveBucket(r.Context(), bb.Bucket.ToBucket(), bb.Deleted, bb.At)
	if err != nil {
		return err
	}
	return writeOutcome(w, out, msg)
}

func (s *Server) digests(w http.ResponseWriter, r *http.Request, _ io.Reader, _ *string) error {
	d, err := s.cfg.Engine.Digests(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/msgpack")
	return msgpack.NewEncoder(w).Encode(peerwire.FromDigests(d))
}

func (s *Server) slot(w http.ResponseWriter, r *http.Request, _ io.Reader, _ *string) error {
	q := r.URL.Query()
	var slots []int
	for _, v := range q["slot"] {
		slot, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%w: %w", errBadRequest, err)
		}
		slots = append(slots, slot)
	}
	refs, err := s.cfg.Engine.SlotVersions(r.Context(), q.Get("bucket"), slots)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/msgpack")
	return msgpack.NewEncoder(w).Encode(peerwire.FromRefs(refs))
}

func (s *Server) resend(w http.ResponseWriter, r *http.Request, _ io.Reader, msg *string) error {
	q := r.URL.Query()
	n, err := s.cfg.Engine.Resend(r.Context(), q.Get("site"), q.Get("bucket"), q.Get("key"))
	if err != nil {
		return err
	}
	*msg = strconv.Itoa(n) + " version(s) queued again"
	return writeJSON(w, peerwire.Resend{Queued: n})
}

func (s *Server) resyncTo(w http.ResponseWriter, r *http.Request, _ io.Reader, _ *string) error {
	job, err := s.cfg.Engine.ResyncStatus(r.Context(), r.URL.Query().Get("site"))
	if err != nil {
		return err
	}
	return writeJSON(w, peerwire.FromResyncJob(job))
}

func (s *Server) catalogExport(w http.ResponseWriter, r *http.Request, _ io.Reader, _ *string) error {
	if s.cfg.CatalogExport == nil {
		return errNoRoute
	}
	data, err := s.cfg.CatalogExport(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(data)
	return err
}

// putIAM applies one IAM record. Its body holds a secret in the clear:
// nothing of it is traced or logged but the kind and name.
func (s *Server) putIAM(w http.ResponseWriter, r *http.Request, body io.Reader, msg *string) error {
	raw, err := readBounded(body, s.cfg.MaxMetaBytes, r.ContentLength)
	if err != nil {
		return err
	}
	var rec peerwire.IAMRecord
	if err := decodeMsgpack(raw, &rec); err != nil {
		return fmt.Errorf("%w: %w", errBadRequest, err)
	}
	out, err := s.cfg.Engine.ReceiveIAM(r.Context(), rec.ToIAM())
	if err != nil {
		return err
	}
	*msg = "iam " + rec.Kind + " " + rec.Name + ": " + out.String()
	return writeJSON(w, peerwire.Outcome{Outcome: out.String()})
}

// maxBatchBytes bounds a batch of small versions.
const maxBatchBytes = 64 << 20

func (s *Server) putVersions(w http.ResponseWriter, r *http.Request, body io.Reader, msg *string) error {
	// The whole body must have verified before anything is applied.
	raw, err := readBounded(body, maxBatchBytes, r.ContentLength)
	if err != nil {
		return err
	}
	items, err := decodeBatch(raw)
	if err != nil {
		return err
	}
	out := make([]peerwire.ItemResult, len(items))
	refused := 0
	err = s.cfg.Engine.ReceiveVersions(r.Context(), items, s.guard, func(i int, o objects.ApplyOutcome, err error) {
		if err != nil {
			code, status := classify(err)
			out[i] = peerwire.ItemResult{Code: code, Message: err.Error()}
			refused++
			if status == http.StatusForbidden && s.cfg.Trace.Enabled(trace.S3) {
				s.cfg.Trace.Publish(trace.Event{Type: trace.S3, FuncName: "s3.ReplicationRequest", Method: r.Method,
					Path: "/" + items[i].Bucket + "/" + items[i].Key, StatusCode: status, RemoteAddr: r.RemoteAddr,
					Msg: "refused in a batch", Error: err.Error()})
			}
			return
		}
		out[i] = peerwire.ItemResult{Outcome: o.String()}
	})
	if err != nil {
		return err
	}
	*msg = fmt.Sprintf("batch of %d versions, %d refused", len(items), refused)
	return writeJSON(w, out)
}

// decodeVersionHeader decodes the version record a peer sends with an
// object's data and checks it against the body length.
func decodeVersionHeader(h string, contentLength int64) (*objects.Version, error) {
	raw, err := base64.StdEncoding.DecodeString(h)
	if err != nil || len(raw) == 0 {
		return nil, fmt.Errorf("%w: missing or bad %s", errBadRequest, headerVersion)
	}
	var wv peerwire.ObjectVersion
	if err := decodeMsgpack(raw, &wv); err != nil {
		return nil, fmt.Errorf("%w: %w", errBadRequest, err)
	}
	v := wv.ToVersion()
	var total int64
	for _, sg := range v.Segments {
		if sg.Size < 0 || total+sg.Size < total {
			return nil, fmt.Errorf("%w: bad segment size", errBadRequest)
		}
		total += sg.Size
	}
	switch {
	case v.DeleteMarker:
	case len(v.KeyCheck) > 0 && contentLength < total:
		// SSE-C: the stored ciphertext, longer than the plaintext; the
		// object layer holds it to the exact length of every segment.
		return nil, fmt.Errorf("%w: body shorter than the version's segments", errBadRequest)
	case len(v.KeyCheck) == 0 && total != contentLength:
		return nil, fmt.Errorf("%w: body length does not match the version's segments", errBadRequest)
	}
	return v, nil
}

// readBounded reads a whole body of at most limit bytes into a buffer of
// the size the sender announced (size; -1 when unknown), so a batch of
// many MiB is not copied at every doubling.
func readBounded(body io.Reader, limit, size int64) ([]byte, error) {
	raw, err := objects.ReadSized(io.LimitReader(body, limit+1), min(size, limit))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadRequest, err)
	}
	if int64(len(raw)) > limit {
		return nil, fmt.Errorf("%w: body larger than %d bytes", errBadRequest, limit)
	}
	return raw, nil
}

// decodeBatch decodes a batch of versions after checking its bounds.
func decodeBatch(raw []byte) ([]replication.VersionItem, error) {
	wire, err := peerwire.DecodeItems(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadRequest, err)
	}
	items, err := peerwire.ToItems(wire)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadRequest, err)
	}
	return items, nil
}
