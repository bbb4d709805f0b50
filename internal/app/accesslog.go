package app

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/twinlake/twinlake/internal/catalog/rest"
	"github.com/twinlake/twinlake/internal/httprec"
	"github.com/twinlake/twinlake/internal/metrics"
	"github.com/twinlake/twinlake/internal/replication/peerhttp"
	"github.com/twinlake/twinlake/internal/s3api"
)

// accessEntry is one line of the access log. Keys are camelCase, as the
// client's --json output; durations are a string with the seconds beside.
// Nothing secret is kept: no headers, no query string (a presigned URL's
// signature), only the verified signer's access key.
type accessEntry struct {
	Time            time.Time `json:"time"`
	RequestID       string    `json:"requestId,omitempty"`
	RemoteAddr      string    `json:"remoteAddr"`
	User            string    `json:"user,omitempty"`
	Method          string    `json:"method"`
	API             string    `json:"api"`
	Bucket          string    `json:"bucket,omitempty"`
	Key             string    `json:"key,omitempty"`
	Status          int       `json:"status"`
	BytesIn         int64     `json:"bytesIn"`
	BytesOut        int64     `json:"bytesOut"`
	Duration        string    `json:"duration"`
	DurationSeconds float64   `json:"durationSeconds"`
}

// surfaces name the API of requests outside the S3 API, by path prefix.
var surfaces = []struct{ prefix, api string }{
	{"/twinlake/health/", "health"},
	{"/twinlake/admin/", "admin"},
	{peerhttp.Prefix, "peer"},
	{metrics.Path, "metrics"},
	{rest.PathPrefix, "catalog"},
}

// withAccessLog wraps h in the access log when Config.AccessLog is set.
func (s *Server) withAccessLog(h http.Handler) http.Handler {
	if s.cfg.AccessLog == nil {
		return h
	}
	return &accessLog{next: h, out: s.cfg.AccessLog}
}

// accessLog writes one JSON line per request served by next to out. Lines
// are written whole under a lock, so concurrent requests never interleave.
type accessLog struct {
	next http.Handler
	mu   sync.Mutex
	out  io.Writer
}

func (a *accessLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ctx, info := s3api.WithRequestInfo(r.Context())
	r = r.WithContext(ctx)
	body := &countingBody{ReadCloser: r.Body}
	if r.Body != nil {
		r.Body = body
	}
	rec := &httprec.Recorder{ResponseWriter: w}
	a.next.ServeHTTP(rec, r)
	in := body.n
	if info.BodyElsewhere {
		in = max(r.ContentLength, 0) // received by the node that wrote it
	}
	a.write(entryFor(r, info, rec, in, start))
}

func entryFor(r *http.Request, info *s3api.RequestInfo, rec *httprec.Recorder, bytesIn int64, start time.Time) accessEntry {
	dur := time.Since(start)
	e := accessEntry{
		Time: start.UTC(), RequestID: info.ID, RemoteAddr: r.RemoteAddr, User: info.AccessKey, Method: r.Method,
		API: info.API, Bucket: info.Bucket, Key: info.Key, Status: rec.Status, BytesIn: bytesIn, BytesOut: rec.Bytes,
		Duration: dur.String(), DurationSeconds: dur.Seconds(),
	}
	if e.Status == 0 {
		e.Status = http.StatusOK
	}
	if e.RequestID == "" {
		e.RequestID = rec.Header().Get("x-amz-request-id")
	}
	if e.API == "" {
		e.API = "s3"
		for _, s := range surfaces {
			if strings.HasPrefix(r.URL.Path, s.prefix) {
				e.API = s.api
				break
			}
		}
	}
	return e
}

func (a *accessLog) write(e accessEntry) {
	line, err := json.Marshal(e)
	if err != nil {
		return // only plain fields: cannot happen
	}
	line = append(line, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	a.out.Write(line) // a full disk must not fail requests; the gap shows in the file
}

// countingBody counts the request body bytes the handler read.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}
