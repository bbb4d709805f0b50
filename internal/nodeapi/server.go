// Package nodeapi is the API the nodes of one site speak to each other
// (/twinlake/node/v1/): today, a node's drive served to the others, so
// that a drive set can hold one shard of each blob on every node. The
// server side hands a local blob.Drive to HTTP; the client side (Drive) is
// a blob.Drive over HTTP. Every request is authenticated with the site's
// node secret (auth.go); nothing of it is reachable without it.
package nodeapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"syscall"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/trace"
)

// Prefix is where the node API is served.
const Prefix = "/twinlake/node/v1/"

// A drive's calls are under pathDrives + its index + "/", then one of
// pathShards, pathList, pathMark, pathBatch (batch.go) or pathRemovals
// (removes.go).
const (
	pathDrives = Prefix + "drives/"
	pathShards = "shards/"
	pathList   = "list/"
	pathMark   = "mark"
)

// drivePath is where drive i's calls are served.
func drivePath(i int) string { return pathDrives + strconv.Itoa(i) + "/" }

// Server serves a node's local drives, and its trace events, to the
// site's other nodes.
type Server struct {
	drives []blob.Drive
	secret []byte
	bus    *trace.Bus
	log    *slog.Logger
	// routing, when set, is told with the process (SetRouting).
	routing func() Routing
	// writes, when set, takes the leader's calls to write the bodies
	// the node offered (SetWrites).
	writes http.Handler
}

// PathWrites is where a node takes the leader's call to write the body of
// a PUT it offered to (HeaderWriteOffer): PathWrites + the offer's token.
const PathWrites = Prefix + "writes/"

// SetWrites has h take the calls to PathWrites, once authenticated; call
// it before serving.
func (s *Server) SetWrites(h http.Handler) { s.writes = h }

// NewServer serves drives (the node's, in order: a caller names one by
// its index), and the events published on bus (nil: none), to requests
// signed with secret (at least MinSecretLen bytes).
func NewServer(drives []blob.Drive, secret []byte, bus *trace.Bus, log *slog.Logger) (*Server, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("nodeapi: the node secret must be at least %d bytes", MinSecretLen)
	}
	if len(drives) == 0 {
		return nil, errors.New("nodeapi: a node serves at least one drive")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{drives: drives, secret: secret, bus: bus, log: log}, nil
}

// drive splits a drive call's path into its drive and the rest.
func (s *Server) drive(p string) (blob.Drive, string, bool) {
	idx, rest, ok := strings.Cut(strings.TrimPrefix(p, pathDrives), "/")
	i, err := strconv.Atoi(idx)
	if !ok || err != nil || i < 0 || i >= len(s.drives) || strconv.Itoa(i) != idx {
		return nil, "", false
	}
	return s.drives[i], rest, true
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := verify(s.secret, r); err != nil {
		writeError(w, http.StatusForbidden, err)
		return
	}
	p := r.URL.Path
	var err error
	if p == pathTrace && r.Method == http.MethodGet {
		err = s.traceStream(w, r)
	} else if p == pathProcess && r.Method == http.MethodGet {
		err = s.process(w)
	} else if strings.HasPrefix(p, PathWrites) && r.Method == http.MethodPost && s.writes != nil {
		s.writes.ServeHTTP(w, r)
	} else if d, rest, ok := s.drive(p); !ok {
		err = errNoRoute
	} else {
		switch {
		case strings.HasPrefix(rest, pathShards):
			err = s.shard(d, w, r, strings.TrimPrefix(rest, pathShards))
		case strings.HasPrefix(rest, pathList) && r.Method == http.MethodGet:
			err = s.list(d, w, strings.TrimPrefix(rest, pathList))
		case rest == pathMark:
			err = s.mark(d, w, r)
		case rest == pathBatch:
			err = s.putBatch(d, w, r)
		case rest == pathRemovals:
			err = s.removeBatch(d, w, r)
		default:
			err = errNoRoute
		}
	}
	if err != nil {
		status := statusOf(err)
		if status == http.StatusInternalServerError {
			s.log.Warn("node api", "method", r.Method, "path", p, "err", err)
		}
		writeError(w, status, err)
	}
}

var errNoRoute = errors.New("no such node API call")

func statusOf(err error) int {
	switch {
	case errors.Is(err, errNoRoute):
		return http.StatusNotFound
	case errors.Is(err, blob.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, blob.ErrInvalidID), errors.Is(err, errBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, syscall.ENOSPC):
		return http.StatusInsufficientStorage // the drive full, or down to its reserve
	}
	return http.StatusInternalServerError
}

var errBadRequest = errors.New("bad request")

func (s *Server) shard(d blob.Drive, w http.ResponseWriter, r *http.Request, id string) error {
	switch r.Method {
	case http.MethodPut:
		return s.putShard(d, w, r, id)
	case http.MethodGet, http.MethodHead:
		return s.getShard(d, w, r, id)
	case http.MethodDelete:
		if err := d.Remove(id); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return errNoRoute
}

// putShard streams the body into a new shard (?mode=rewrite: a
// replacement) and answers once it is durable.
func (s *Server) putShard(d blob.Drive, w http.ResponseWriter, r *http.Request, id string) error {
	var rewrite bool
	switch mode := r.URL.Query().Get("mode"); mode {
	case "", "create":
	case "rewrite":
		rewrite = true
	default:
		return fmt.Errorf("%w: mode %q", errBadRequest, mode)
	}
	sw, err := openShard(d, id, rewrite)
	if err != nil {
		return err
	}
	n, err := io.Copy(sw, r.Body)
	if err == nil && r.ContentLength >= 0 && n != r.ContentLength {
		err = fmt.Errorf("%w: body of %d bytes, %d declared", errBadRequest, n, r.ContentLength)
	}
	if err != nil {
		sw.Abort()
		if errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("shard %s: %w", id, err) // the drive down to its reserve as it was written
		}
		return fmt.Errorf("%w: shard %s: %v", errBadRequest, id, err)
	}
	if err := sw.Commit(); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// openShard starts shard id on d, or its replacement (rewrite).
func openShard(d blob.Drive, id string, rewrite bool) (blob.ShardWriter, error) {
	if rewrite {
		return d.Rewrite(id)
	}
	return d.Create(id)
}

// getShard answers a shard's size (HEAD), a byte range of it (GET with
// Range: bytes=A-B), or, asked with X-Twinlake-Whole-Up-To: N (a GET
// without a range), the whole shard if it is at most N bytes (200) and
// otherwise only its size (204).
func (s *Server) getShard(d blob.Drive, w http.ResponseWriter, r *http.Request, id string) error {
	upTo := int64(-1)
	if h := r.Header.Get(headerWholeUpTo); h != "" && r.Method == http.MethodGet {
		n, err := strconv.ParseInt(h, 10, 64)
		if err != nil || n < 0 || n > maxWholeUpTo {
			return fmt.Errorf("%w: %s %q: want 0 to %d", errBadRequest, headerWholeUpTo, h, maxWholeUpTo)
		}
		upTo = n
	}
	sr, err := d.Open(id)
	if err != nil {
		return err
	}
	defer sr.Close()
	size := sr.Size()
	w.Header().Set(headerShardSize, strconv.FormatInt(size, 10))
	switch {
	case r.Method == http.MethodHead:
		w.WriteHeader(http.StatusOK)
		return nil
	case upTo >= 0 && size > upTo:
		w.WriteHeader(http.StatusNoContent)
		return nil
	case upTo >= 0:
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.WriteHeader(http.StatusOK)
		if _, err := io.Copy(w, io.NewSectionReader(sr, 0, size)); err != nil {
			s.log.Debug("node api: shard read cut", "id", id, "err", err)
		}
		return nil
	}
	off, n, err := parseRange(r.Header.Get("Range"), size)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	w.WriteHeader(http.StatusPartialContent)
	_, err = io.Copy(w, io.NewSectionReader(sr, off, n))
	if err != nil {
		s.log.Debug("node api: shard read cut", "id", id, "err", err)
	}
	return nil
}

// headerShardSize carries a shard's whole size on HEAD and GET.
const headerShardSize = "X-Twinlake-Shard-Size"

// headerWholeUpTo asks for a shard whole if it is at most that many
// bytes; maxWholeUpTo bounds it.
const (
	headerWholeUpTo = "X-Twinlake-Whole-Up-To"
	maxWholeUpTo    = 1 << 20
)

// parseRange reads "bytes=A-B" (inclusive) within size.
func parseRange(h string, size int64) (off, n int64, err error) {
	spec, ok := strings.CutPrefix(h, "bytes=")
	a, b, ok2 := strings.Cut(spec, "-")
	if !ok || !ok2 {
		return 0, 0, fmt.Errorf("%w: range %q", errBadRequest, h)
	}
	off, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || off < 0 || end < off || end >= size {
		return 0, 0, fmt.Errorf("%w: range %q of %d bytes", errBadRequest, h, size)
	}
	return off, end - off + 1, nil
}

func (s *Server) list(d blob.Drive, w http.ResponseWriter, fan string) error {
	ids, err := d.List(fan)
	if err != nil {
		return err
	}
	if ids == nil {
		ids = []string{}
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(ids)
}

// maxMark bounds a drive mark's size.
const maxMark = 4 << 10

func (s *Server) mark(d blob.Drive, w http.ResponseWriter, r *http.Request) error {
	switch r.Method {
	case http.MethodGet:
		m, err := d.ReadMark()
		if err != nil {
			return err
		}
		w.Write(m)
		return nil
	case http.MethodPut:
		m, err := io.ReadAll(io.LimitReader(r.Body, maxMark+1))
		if err != nil || len(m) > maxMark {
			return fmt.Errorf("%w: a mark of at most %d bytes", errBadRequest, maxMark)
		}
		if err := d.WriteMark(m); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return errNoRoute
}

// apiError is the JSON body of every error answer.
type apiError struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(apiError{Error: err.Error()})
}
