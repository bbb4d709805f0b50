package app

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/catalogwire"
)

// Early holds a site's listener from before its stores open until Start
// serves on it, so that probes are answered while the site opens, however
// long that takes (a first start after an upgrade converts the stores
// once): /twinlake/health/live answers 200 at once, /twinlake/health/ready
// answers 503 with the reason, and every other request 503 with
// Retry-After, an S3 ServiceUnavailable error a client retries.
type Early struct {
	tcp    *net.TCPListener
	gate   *gate
	tls    *tls.Config
	srv    *http.Server
	done   chan error
	reason atomic.Value // string
	once   sync.Once
}

// earlyReadHeaderTimeout bounds a request's headers before the settings
// are read (the site's own api read_header_timeout applies once it serves).
const earlyReadHeaderTimeout = 30 * time.Second

// Listen binds cfg.Address (with cfg.TLS) and answers as Early says until
// Start, given it in Config.Early, takes the listener over.
func Listen(cfg Config) (*Early, error) {
	ln, err := net.Listen("tcp", cfg.Address)
	if err != nil {
		return nil, err
	}
	tcp, ok := ln.(*net.TCPListener)
	if !ok {
		ln.Close()
		return nil, fmt.Errorf("listen %s: not a TCP listener", cfg.Address)
	}
	e := &Early{tcp: tcp, gate: &gate{TCPListener: tcp}, tls: cfg.TLS, done: make(chan error, 1)}
	e.SetReason("starting: opening the stores")
	e.srv = &http.Server{Handler: e, ReadHeaderTimeout: earlyReadHeaderTimeout}
	var served net.Listener = e.gate
	if cfg.TLS != nil {
		served = tls.NewListener(served, cfg.TLS)
	}
	go func() { e.done <- e.srv.Serve(served) }()
	return e, nil
}

// Addr is the bound address.
func (e *Early) Addr() net.Addr { return e.tcp.Addr() }

// SetReason says why the site is not ready yet.
func (e *Early) SetReason(reason string) { e.reason.Store(reason) }

func (e *Early) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reason, _ := e.reason.Load().(string)
	switch r.URL.Path {
	case "/twinlake/health/live":
		w.WriteHeader(http.StatusOK)
	case "/twinlake/health/ready":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, reason)
	default:
		unavailable(w, r, fmt.Sprintf("The site is starting (%s); retry shortly.", reason))
	}
}

// unavailable answers 503 with Retry-After, which clients retry, in each
// surface's error format: the Iceberg error model on the catalog, an admin
// API error in JSON on the admin API, an S3 error in XML elsewhere.
func unavailable(w http.ResponseWriter, r *http.Request, msg string) {
	w.Header().Set("Retry-After", "1")
	if strings.HasPrefix(r.URL.Path, "/_iceberg/") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(catalogwire.ErrorResponse{Error: catalogwire.ErrorModel{
			Message: msg, Type: "ServiceUnavailableException", Code: http.StatusServiceUnavailable}})
		return
	}
	if strings.HasPrefix(r.URL.Path, "/twinlake/admin/") {
		w.Header().Set("Content-Type", adminclient.ContentTypeJSON)
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(adminclient.ErrorBody{Code: adminclient.CodeUnavailable, Message: msg})
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<Error><Code>ServiceUnavailable</Code><Message>%s</Message><Resource>%s</Resource></Error>`,
		xmlText(msg), xmlText(r.URL.Path))
}

// handOver stops answering and returns the listener, open, for the site's
// own server. Requests in flight finish first; new connections wait in the
// listen backlog meanwhile.
func (e *Early) handOver() (net.Listener, error) {
	var err error
	e.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = e.srv.Shutdown(ctx)
		if serveErr := <-e.done; !errors.Is(serveErr, http.ErrServerClosed) {
			err = errors.Join(err, serveErr)
		}
		// The early server's Accept has returned: clear its deadline for
		// the site's server.
		err = errors.Join(err, e.tcp.SetDeadline(time.Time{}))
	})
	var ln net.Listener = e.tcp
	if e.tls != nil {
		ln = tls.NewListener(ln, e.tls)
	}
	return ln, err
}

// Close releases the listener when the site never started.
func (e *Early) Close() error {
	_, err := e.handOver()
	return errors.Join(err, e.tcp.Close())
}

// gate lets the early server accept from the listener without owning it:
// its Close stops Accept (which polls every gatePoll) but leaves the
// listener open for the site's server.
type gate struct {
	*net.TCPListener
	stop atomic.Bool
}

const gatePoll = 100 * time.Millisecond

func (g *gate) Accept() (net.Conn, error) {
	for {
		if g.stop.Load() {
			return nil, net.ErrClosed
		}
		if err := g.TCPListener.SetDeadline(time.Now().Add(gatePoll)); err != nil {
			return nil, err
		}
		c, err := g.TCPListener.Accept()
		if err == nil {
			return c, nil
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			continue
		}
		return nil, err
	}
}

func (g *gate) Close() error {
	g.stop.Store(true)
	return nil
}

// xmlText escapes s for an XML text node.
func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
