package console

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// backendHost is the Host of in-process requests: an address, so it can
// never be taken for a virtual-host bucket name.
const backendHost = "127.0.0.1"

// region is the region every twinlake site signs for.
const region = "us-east-1"

type backendHolder struct{ h atomic.Pointer[http.Handler] }

func (b *backendHolder) set(h http.Handler) {
	if h != nil {
		b.h.Store(&h)
	}
}

func (b *backendHolder) get() http.Handler {
	if p := b.h.Load(); p != nil {
		return *p
	}
	return nil
}

// origin is what the site's surfaces see of the browser's request: its
// remote address (aws:SourceIp conditions, access log) and TLS state
// (aws:SecureTransport).
type origin struct {
	remoteAddr string
	tls        *tls.ConnectionState
}

func originOf(r *http.Request) origin { return origin{remoteAddr: r.RemoteAddr, tls: r.TLS} }

// inproc is an http.RoundTripper that serves each request with the site's
// handler in the same process, streaming both bodies through pipes; the
// requests come from the browser's origin.
type inproc struct {
	backend *backendHolder
	origin  origin
}

var errNoBackend = errors.New("console: no backend handler")

func (t inproc) RoundTrip(req *http.Request) (*http.Response, error) {
	h := t.backend.get()
	if h == nil {
		return nil, errNoBackend
	}
	ctx := req.Context()
	sr := req.Clone(ctx)
	sr.RequestURI = req.URL.RequestURI()
	sr.Host = req.URL.Host
	sr.Proto, sr.ProtoMajor, sr.ProtoMinor = "HTTP/1.1", 1, 1
	if sr.Body == nil {
		sr.Body = http.NoBody
	}
	sr.RemoteAddr, sr.TLS = t.origin.remoteAddr, t.origin.tls
	pr, pw := io.Pipe()
	rw := &pipeResponse{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				if !rw.wrote {
					rw.WriteHeader(http.StatusInternalServerError)
				}
				pw.CloseWithError(fmt.Errorf("console backend: panic: %v", p))
				return
			}
			if !rw.wrote {
				rw.WriteHeader(http.StatusOK)
			}
			pw.Close()
		}()
		h.ServeHTTP(rw, sr)
	}()
	select {
	case <-rw.ready:
	case <-ctx.Done():
		pr.CloseWithError(ctx.Err())
		return nil, ctx.Err()
	}
	resp := &http.Response{
		Status: fmt.Sprintf("%d %s", rw.code, http.StatusText(rw.code)), StatusCode: rw.code,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rw.sent, Body: pr, Request: req, ContentLength: -1,
	}
	if n, err := strconv.ParseInt(rw.sent.Get("Content-Length"), 10, 64); err == nil {
		resp.ContentLength = n
	}
	if req.Method == http.MethodHead {
		resp.Body = http.NoBody
		go io.Copy(io.Discard, pr)
	}
	return resp, nil
}

// pipeResponse is the ResponseWriter of an in-process request: headers are
// handed over at WriteHeader, the body streams through the pipe.
type pipeResponse struct {
	header http.Header
	sent   http.Header
	code   int
	wrote  bool
	once   sync.Once
	ready  chan struct{}
	pw     *io.PipeWriter
}

func (p *pipeResponse) Header() http.Header { return p.header }

func (p *pipeResponse) WriteHeader(code int) {
	if p.wrote {
		return
	}
	if code >= 100 && code < 200 {
		return // informational answers (100 Continue) are not the response
	}
	p.wrote = true
	p.code = code
	p.sent = p.header.Clone()
	p.once.Do(func() { close(p.ready) })
}

func (p *pipeResponse) Write(b []byte) (int, error) {
	if !p.wrote {
		p.WriteHeader(http.StatusOK)
	}
	return p.pw.Write(b)
}

// Flush lets streaming handlers flush; the pipe has no buffer to flush.
func (p *pipeResponse) Flush() {
	if !p.wrote {
		p.WriteHeader(http.StatusOK)
	}
}

// clients are the signed clients of one console call, as the signed-in
// user.
type clients struct {
	admin *adminclient.Client
	s3    *minio.Client
	creds adminclient.Credentials
	http  *http.Client
}

func (c *Console) clientsFor(s session, o origin) (*clients, error) {
	hc := &http.Client{Transport: inproc{backend: &c.backend, origin: o}}
	creds := adminclient.Credentials{AccessKey: s.accessKey, SecretKey: s.secretKey}
	adm, err := adminclient.New("http://"+backendHost, creds, adminclient.Config{HTTPClient: hc, UserAgent: "twinlake-console"})
	if err != nil {
		return nil, err
	}
	s3, err := minio.New(backendHost, &minio.Options{
		Creds:        miniocreds.NewStaticV4(s.accessKey, s.secretKey, ""),
		Transport:    hc.Transport,
		Region:       region,
		BucketLookup: minio.BucketLookupPath,
		MaxRetries:   1,
	})
	if err != nil {
		return nil, err
	}
	return &clients{admin: adm, s3: s3, creds: creds, http: hc}, nil
}

// catalog returns a catalog client for warehouse as the user.
func (cl *clients) catalog(warehouse string) (*adminclient.CatalogClient, error) {
	return adminclient.NewCatalog("http://"+backendHost, warehouse, cl.creds, adminclient.Config{HTTPClient: cl.http, UserAgent: "twinlake-console"})
}
