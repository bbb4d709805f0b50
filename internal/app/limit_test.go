package app_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/testsite"
)

// signed builds a SigV4-signed request with an unsigned payload, so that
// body can be a pipe the test feeds at its own pace.
func signed(t *testing.T, site *testsite.Site, method, path string, body io.Reader, length int64) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, site.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	creds := aws.Credentials{AccessKeyID: site.AccessKey, SecretAccessKey: site.SecretKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, "UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	return req
}

// answer is one response, read whole.
type answer struct {
	status int
	body   string
	header http.Header
	took   time.Duration
	err    error
}

func send(site *testsite.Site, req *http.Request) answer {
	start := time.Now()
	resp, err := site.HTTPClient.Do(req)
	if err != nil {
		return answer{err: err, took: time.Since(start)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: string(b), header: resp.Header, took: time.Since(start), err: err}
}

// heldPut is a PUT whose body the test releases when it chooses: it holds a
// request slot until then.
type heldPut struct {
	w    *io.PipeWriter
	done chan answer
}

const heldSize = 1 << 20

func startHeldPut(t *testing.T, site *testsite.Site, key string) *heldPut {
	r, w := io.Pipe()
	h := &heldPut{w: w, done: make(chan answer, 1)}
	req := signed(t, site, http.MethodPut, "/limits/"+key, r, heldSize)
	go func() { h.done <- send(site, req) }()
	w.Write(make([]byte, 1024)) // under way: headers sent, body started
	return h
}

func (h *heldPut) finish(t *testing.T) {
	t.Helper()
	h.w.Write(make([]byte, heldSize-1024))
	h.w.Close()
	if a := <-h.done; a.err != nil || a.status != http.StatusOK {
		t.Errorf("held PUT: %d %v %s", a.status, a.err, a.body)
	}
}

// metric returns the value of an unlabelled metric on site.
func metric(t *testing.T, site *testsite.Site, name string) float64 {
	t.Helper()
	text, err := testsite.Scrape(site, "", "")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no %s in the exposition", name)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func setAPI(t *testing.T, site *testsite.Site, kv map[string]string) {
	t.Helper()
	if err := site.Server().Settings().Set(context.Background(), config.SubsysAPI, kv); err != nil {
		t.Fatal(err)
	}
}

// TestRequestsMax: with api requests_max=2 and two uploads holding both
// slots, a third S3 request queues; past requests_deadline it is answered
// 503 SlowDown with Retry-After and counted; a slot freeing lets a queued
// request through; health probes and metrics never queue; requests_max=0,
// set at runtime, lets everything flow.
func TestRequestsMax(t *testing.T) {
	site := testsite.Start(t)
	if a := send(site, signed(t, site, http.MethodPut, "/limits", nil, 0)); a.status != http.StatusOK {
		t.Fatalf("create bucket: %d %v %s", a.status, a.err, a.body)
	}
	setAPI(t, site, map[string]string{config.APIRequestsMax: "2", config.APIRequestsDeadline: "300ms"})
	first, second := startHeldPut(t, site, "one"), startHeldPut(t, site, "two")

	// Once both uploads hold their slots, a listing waits out the deadline.
	var shed answer
	waitUntil(t, "a request shed with SlowDown", func() bool {
		shed = send(site, signed(t, site, http.MethodGet, "/", nil, 0))
		return shed.status == http.StatusServiceUnavailable
	})
	if !strings.Contains(shed.body, "<Code>SlowDown</Code>") || !strings.Contains(shed.body, "<RequestId>") {
		t.Errorf("shed body: %s", shed.body)
	}
	if shed.header.Get("Retry-After") == "" || shed.header.Get("x-amz-request-id") == "" {
		t.Errorf("shed headers: %v", shed.header)
	}
	if shed.took < 300*time.Millisecond {
		t.Errorf("shed after %v, before the 300ms deadline", shed.took)
	}
	if got := metric(t, site, "twinlake_s3_rejected_requests_total"); got < 1 {
		t.Errorf("rejected requests counted %v", got)
	}
	resp, err := site.HTTPClient.Get(site.URL + "/twinlake/health/live")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("health while full: %v %v", resp, err)
	}
	resp.Body.Close()

	// A queued request is served when a slot frees.
	setAPI(t, site, map[string]string{config.APIRequestsDeadline: "10s"})
	queued := make(chan answer, 1)
	go func() { queued <- send(site, signed(t, site, http.MethodGet, "/limits?list-type=2", nil, 0)) }()
	waitUntil(t, "the listing to queue", func() bool { return metric(t, site, "twinlake_s3_waiting_requests") == 1 })
	first.finish(t)
	if a := <-queued; a.status != http.StatusOK {
		t.Errorf("queued listing: %d %v %s", a.status, a.err, a.body)
	}

	// Unlimited, set at runtime: with one upload still held, requests flow
	// past the old limit at once.
	third := startHeldPut(t, site, "three")
	setAPI(t, site, map[string]string{config.APIRequestsDeadline: "300ms"})
	waitUntil(t, "both slots held again", func() bool {
		return send(site, signed(t, site, http.MethodGet, "/", nil, 0)).status == http.StatusServiceUnavailable
	})
	setAPI(t, site, map[string]string{config.APIRequestsMax: "0"})
	for range 3 {
		if a := send(site, signed(t, site, http.MethodGet, "/", nil, 0)); a.status != http.StatusOK || a.took > 5*time.Second {
			t.Errorf("unlimited listing: %d after %v", a.status, a.took)
		}
	}
	second.finish(t)
	third.finish(t)
}
