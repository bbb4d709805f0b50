package s3api_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/twinlake/twinlake/internal/app"
	"github.com/twinlake/twinlake/internal/testsite"
)

// TestClientGoneIsNoInternalError: a client that hangs up in the middle of
// a GET's body is logged at debug level as gone, not as an internal error
// (an operator's alert), for a reset and for a plain close.
func TestClientGoneIsNoInternalError(t *testing.T) {
	var logs testsite.LockedBuffer
	site := testsite.Start(t, testsite.WithApp(func(c *app.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}))
	c := sdkClient(site, site.SecretKey)
	mustCreateBucket(t, c, "gone")
	body := bytes.Repeat([]byte("0123456789abcdef"), 4<<20) // 64 MiB: more than the sockets buffer
	if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("gone"), Key: aws.String("big"),
		Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	rc := rawClient{t, site}
	for i, reset := range []bool{true, false} {
		conn, err := net.Dial("tcp", site.Addr)
		if err != nil {
			t.Fatal(err)
		}
		req := rc.sign(rawRequest{method: http.MethodGet, target: "/gone/big"})
		if err := req.Write(conn); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET: %v, %v", resp, err)
		}
		if _, err := io.CopyN(io.Discard, resp.Body, 1<<20); err != nil {
			t.Fatal(err)
		}
		if reset {
			conn.(*net.TCPConn).SetLinger(0)
		}
		conn.Close()
		deadline := time.Now().Add(10 * time.Second)
		for strings.Count(logs.String(), "client went away") <= i && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := strings.Count(logs.String(), "client went away"); n != i+1 {
			t.Fatalf("after the client hung up (reset %v), %d lines say it went away; log:\n%s", reset, n, logs.String())
		}
	}
	if strings.Contains(logs.String(), "internal error") {
		t.Fatalf("a client hanging up was logged as an internal error:\n%s", logs.String())
	}
}
