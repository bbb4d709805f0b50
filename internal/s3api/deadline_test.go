package s3api_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/twinlake/twinlake/internal/testsite"
)

// startDeadlineSite runs a site whose body deadlines are short enough to
// test: 1 s without progress, 3 s per body, 1 s to send headers.
func startDeadlineSite(t *testing.T) *testsite.Site {
	t.Setenv("TWINLAKE_API_BODY_IDLE_TIMEOUT", "1s")
	t.Setenv("TWINLAKE_API_BODY_DEADLINE", "3s")
	t.Setenv("TWINLAKE_API_READ_HEADER_TIMEOUT", "1s")
	site := testsite.Start(t)
	mustCreateBucket(t, sdkClient(site, site.SecretKey), "deadlines")
	return site
}

// rawConn opens a connection to the site with a safety deadline.
func rawConn(t *testing.T, site *testsite.Site) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", site.Addr)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(15 * time.Second))
	t.Cleanup(func() { conn.Close() })
	return conn
}

// writeSignedHead signs a PUT of body as declared (UNSIGNED-PAYLOAD) and
// writes only its request line and headers.
func writeSignedHead(t *testing.T, rc rawClient, conn net.Conn, target string, declared int64, extra string) {
	t.Helper()
	req := rc.sign(rawRequest{method: http.MethodPut, target: target, payloadHash: "UNSIGNED-PAYLOAD", declared: declared})
	var b bytes.Buffer
	fmt.Fprintf(&b, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n%s", req.URL.RequestURI(), req.Host, declared, extra)
	for k, vs := range req.Header {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	if _, err := conn.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
}

func readStatus(t *testing.T, conn net.Conn) (int, string) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestExpectContinueAnsweredPromptly: a PUT with Expect: 100-continue is
// answered at once: a refused one with its error (the body never asked
// for), an accepted one with 100 Continue, then its result.
func TestExpectContinueAnsweredPromptly(t *testing.T) {
	site := testsite.Start(t)
	mustCreateBucket(t, sdkClient(site, site.SecretKey), "deadlines")
	rc := rawClient{t, site}

	conn := rawConn(t, site)
	start := time.Now()
	fmt.Fprintf(conn, "PUT /deadlines/anon HTTP/1.1\r\nHost: %s\r\nContent-Length: 123\r\nExpect: 100-continue\r\n\r\n", site.Addr)
	if st, _ := readStatus(t, conn); st != http.StatusForbidden || time.Since(start) > 2*time.Second {
		t.Fatalf("anonymous Expect PUT: %d after %v, want 403 at once", st, time.Since(start))
	}

	conn = rawConn(t, site)
	start = time.Now()
	writeSignedHead(t, rc, conn, "/deadlines/signed", 5, "Expect: 100-continue\r\n")
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") || time.Since(start) > 500*time.Millisecond {
		t.Fatalf("signed Expect PUT: %q %v after %v, want 100 Continue at once", line, err, time.Since(start))
	}
	br.ReadString('\n') // the blank line ending the interim response
	conn.Write([]byte("hello"))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("signed Expect PUT after the body: %v %v", resp, err)
	}
}

// TestBodyDeadlines: a body that stops arriving is answered RequestTimeout
// after the idle timeout and its connection closed; one that keeps
// arriving passes though it takes longer than the idle timeout; none may
// take longer than the overall deadline; headers have their own timeout.
func TestBodyDeadlines(t *testing.T) {
	site := startDeadlineSite(t)
	rc := rawClient{t, site}

	t.Run("stalled 5 GiB upload", func(t *testing.T) {
		conn := rawConn(t, site)
		writeSignedHead(t, rc, conn, "/deadlines/stalled", 5<<30, "")
		conn.Write(bytes.Repeat([]byte("x"), 16))
		start := time.Now()
		st, body := readStatus(t, conn)
		if el := time.Since(start); st != http.StatusBadRequest || !strings.Contains(body, "RequestTimeout") || el < 900*time.Millisecond || el > 3*time.Second {
			t.Fatalf("stalled body: %d %s after %v", st, body, el)
		}
		if n, err := conn.Read(make([]byte, 1)); err == nil {
			t.Fatalf("connection still open after the timeout (read %d)", n)
		}
	})

	t.Run("slow but steady upload", func(t *testing.T) {
		conn := rawConn(t, site)
		const pieces = 6
		writeSignedHead(t, rc, conn, "/deadlines/slow", pieces*4, "")
		for range pieces { // 2.4 s in all, well past the 1 s idle timeout
			time.Sleep(400 * time.Millisecond)
			conn.Write([]byte("slow"))
		}
		if st, body := readStatus(t, conn); st != http.StatusOK {
			t.Fatalf("steady upload: %d %s", st, body)
		}
		if got, _ := getBody(t, sdkClient(site, site.SecretKey), getInput("deadlines", "slow")); got != strings.Repeat("slow", pieces) {
			t.Fatalf("stored %q", got)
		}
	})

	t.Run("upload past the overall deadline", func(t *testing.T) {
		conn := rawConn(t, site)
		writeSignedHead(t, rc, conn, "/deadlines/endless", 1<<20, "")
		start := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for time.Since(start) < 8*time.Second {
				if _, err := conn.Write([]byte("more")); err != nil {
					return
				}
				time.Sleep(300 * time.Millisecond)
			}
		}()
		st, body := readStatus(t, conn)
		if el := time.Since(start); st != http.StatusBadRequest || !strings.Contains(body, "RequestTimeout") || el < 2500*time.Millisecond || el > 5*time.Second {
			t.Fatalf("endless body: %d %s after %v", st, body, el)
		}
		conn.Close()
		<-done
	})

	t.Run("headers that never end", func(t *testing.T) {
		conn := rawConn(t, site)
		fmt.Fprintf(conn, "GET /deadlines HTTP/1.1\r\nHost: %s\r\n", site.Addr)
		start := time.Now()
		io.ReadAll(conn) // until the server gives up on the connection
		if el := time.Since(start); el > 3*time.Second {
			t.Fatalf("unfinished headers held the connection %v", el)
		}
	})
}

func getInput(bucket, key string) *s3.GetObjectInput {
	return &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
}
