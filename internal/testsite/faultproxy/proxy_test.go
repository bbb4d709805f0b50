package faultproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

const bigSize = 1 << 20

// backend serves /hello, /big (1 MiB) and /stream (one line, then holds the
// response open until the client goes away).
func backend(t *testing.T) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello") })
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) { w.Write(make([]byte, bigSize)) })
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	return srv
}

// newProxy starts a proxy in front of srv and a client with its own
// connection pool, so a test can tell whether a request reused a connection.
// The client timeout only stops a broken test hanging; failedFast rejects it.
func newProxy(t *testing.T, srv *httptest.Server) (*Proxy, *http.Client) {
	t.Helper()
	p, err := New(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return p, &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func get(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func mustGet(t *testing.T, c *http.Client, url string, want int) {
	t.Helper()
	body, err := get(c, url)
	if err != nil || len(body) != want {
		t.Fatalf("GET %s: %d bytes, %v; want %d bytes", url, len(body), err, want)
	}
}

// failedFast asserts that err is a failure other than the client's timeout.
func failedFast(t *testing.T, err error) {
	t.Helper()
	var ne net.Error
	if err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("err = %v, want a fast failure", err)
	}
}

// eventually polls cond until it holds or a deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestForwardAndStats(t *testing.T) {
	p, c := newProxy(t, backend(t))
	mustGet(t, c, p.URL()+"/hello", len("hello"))
	mustGet(t, c, p.URL()+"/big", bigSize)
	eventually(t, "byte counts", func() bool {
		s := p.Stats()
		return s.BytesToTarget > 0 && s.BytesFromTarget > bigSize
	})
	if s := p.Stats(); s.Accepted != 1 || s.Refused != 0 {
		t.Fatalf("stats = %+v, want 1 accepted (keep-alive), 0 refused", s)
	}
}

func TestCutAndRestore(t *testing.T) {
	p, c := newProxy(t, backend(t))
	resp, err := c.Get(p.URL() + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "first\n" {
		t.Fatalf("first line = %q, %v", line, err)
	}
	p.Cut()
	_, err = io.ReadAll(br)
	failedFast(t, err) // the in-flight stream breaks

	_, err = get(c, p.URL()+"/hello")
	failedFast(t, err)
	if s := p.Stats(); s.Refused < 1 {
		t.Fatalf("stats = %+v, want a refused connection", s)
	}
	p.Restore()
	mustGet(t, c, p.URL()+"/hello", len("hello"))
}

func TestLatencyAppliesToOpenConnections(t *testing.T) {
	p, c := newProxy(t, backend(t))
	mustGet(t, c, p.URL()+"/hello", 5) // opens the connection the next request reuses
	const d = 100 * time.Millisecond
	p.SetLatency(d)
	start := time.Now()
	mustGet(t, c, p.URL()+"/hello", 5)
	// The request and the response each cross the link once.
	if el := time.Since(start); el < 2*d {
		t.Fatalf("round trip took %v with latency %v, want >= %v", el, d, 2*d)
	}
	if s := p.Stats(); s.Accepted != 1 {
		t.Fatalf("stats = %+v, want the delayed request on the open connection", s)
	}
}

func TestBandwidth(t *testing.T) {
	p, c := newProxy(t, backend(t))
	const rate = 4 << 20 // bytes per second: 1 MiB takes 250ms
	p.SetBandwidth(rate)
	start := time.Now()
	mustGet(t, c, p.URL()+"/big", bigSize)
	want := time.Duration(bigSize) * time.Second / rate / 2 // generous
	if el := time.Since(start); el < want {
		t.Fatalf("1 MiB at %d B/s took %v, want >= %v", rate, el, want)
	}
}

func TestCloseLeavesNoGoroutines(t *testing.T) {
	srv := backend(t)
	before := runtime.NumGoroutine()
	p, c := newProxy(t, srv)
	p.SetLatency(time.Millisecond)
	mustGet(t, c, p.URL()+"/hello", 5)
	resp, err := c.Get(p.URL() + "/stream") // still open when Close runs
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err = io.ReadAll(resp.Body)
	failedFast(t, err)
	if _, err := net.Dial("tcp", p.Addr()); err == nil {
		t.Fatal("proxy still accepts after Close")
	}
	c.CloseIdleConnections()
	eventually(t, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= before })
}
