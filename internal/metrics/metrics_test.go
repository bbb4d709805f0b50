package metrics

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// allNames lists every name of names.go, for the naming rules below.
var allNames = []string{
	S3RequestsTotal, S3RequestDurationSeconds, S3ReceivedBytesTotal, S3SentBytesTotal, S3ErrorsTotal,
	S3RejectedRequestsTotal, S3WaitingRequests,
	ReplicationBacklogObjects, ReplicationOldestPendingAgeSeconds, ReplicationRetryQueueEntries,
	ReplicationSentBytesTotal, ReplicationSentObjectsTotal, ReplicationFailedObjectsTotal,
	ReplicationDroppedObjectsTotal, ReplicationReceivedObjectsTotal, ReplicationReceivedBytesTotal,
	ReplicationLinkLatencySeconds, ReplicationLinkUp, ReplicationMismatchesTotal,
	ReplicationBatchRequestsTotal, ReplicationBatchVersionsTotal,
	TraceDroppedEventsTotal,
	ClusterNodeUp, ClusterNodeCPU, ClusterNodeLeader, ClusterNodeHeld, ClusterNodeDeposed, ClusterNodeReadsHere, ClusterNodeReadBytesHere, ClusterNodeWritesHere, ClusterNodeWriteBytesHere, DriveUp, HealProgressPercent, HealDegradedBlobs, HealShardsRebuilt,
	EtcdDBBytes, EtcdDBInUseBytes, EtcdQuotaBytes, EtcdNoSpace,
}

func TestNamesFollowConventions(t *testing.T) {
	valid := regexp.MustCompile(`^twinlake_(s3|replication|scanner|catalog|trace|cluster|drive|heal)_[a-z0-9_]+[a-z0-9]$`)
	seen := map[string]bool{}
	for _, n := range allNames {
		if !valid.MatchString(n) || strings.Contains(n, "__") {
			t.Errorf("%s: want twinlake_<part>_<what>_<unit>", n)
		}
		if seen[n] {
			t.Errorf("%s defined twice", n)
		}
		seen[n] = true
	}
}

// families gathers r into name -> family.
func families(t *testing.T, r *Registry) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := r.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// sample returns the value of name's series whose labels are exactly want
// (counter value, or histogram sample count).
func sample(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	for _, m := range fams[name].GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		if len(got) != len(want) {
			continue
		}
		match := true
		for k, v := range want {
			match = match && got[k] == v
		}
		if !match {
			continue
		}
		if h := m.GetHistogram(); h != nil {
			return float64(h.GetSampleCount())
		}
		return m.GetCounter().GetValue()
	}
	t.Fatalf("no %s%v", name, want)
	return 0
}

func TestS3Observe(t *testing.T) {
	r := New()
	s, err := NewS3(r.Registerer())
	if err != nil {
		t.Fatal(err)
	}
	s.Observe("PutObject", 200, 3*time.Millisecond, 1000, 0)
	s.Observe("PutObject", 200, 5*time.Millisecond, 500, 0)
	s.Observe("PutObject", 403, time.Millisecond, 0, 200)
	s.Observe("GetObject", 503, time.Second, 0, 100)
	s.Observe("GetBucketAcl", 501, time.Millisecond, 0, 100)
	fams := families(t, r)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{S3RequestsTotal, map[string]string{LabelAPI: "PutObject", LabelCode: "200"}, 2},
		{S3RequestsTotal, map[string]string{LabelAPI: "PutObject", LabelCode: "403"}, 1},
		{S3ErrorsTotal, map[string]string{LabelAPI: "PutObject", LabelClass: "4xx"}, 1},
		{S3ErrorsTotal, map[string]string{LabelAPI: "GetObject", LabelClass: "5xx"}, 1},
		{S3RequestsTotal, map[string]string{LabelAPI: "GetBucketAcl", LabelCode: "501"}, 1},
		{S3ErrorsTotal, map[string]string{LabelAPI: "GetBucketAcl", LabelClass: ClassUnsupported}, 1},
		{S3RequestDurationSeconds, map[string]string{LabelAPI: "PutObject"}, 3},
		{S3ReceivedBytesTotal, map[string]string{LabelAPI: "PutObject"}, 1500},
		{S3SentBytesTotal, map[string]string{LabelAPI: "PutObject"}, 200},
		{S3SentBytesTotal, map[string]string{LabelAPI: "GetObject"}, 100},
	} {
		if got := sample(t, fams, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	for _, n := range []string{"go_goroutines", "process_start_time_seconds"} {
		if fams[n] == nil {
			t.Errorf("registry lacks %s", n)
		}
	}
	if _, err := NewS3(r.Registerer()); err == nil {
		t.Error("registering the S3 metrics twice succeeded")
	}
	var none *S3
	none.Observe("GetObject", 200, time.Millisecond, 0, 0) // a nil S3 records nothing
}

func TestS3ObserveDoesNotAllocate(t *testing.T) {
	s, err := NewS3(New().Registerer())
	if err != nil {
		t.Fatal(err)
	}
	s.Observe("GetObject", 200, time.Millisecond, 10, 10)
	if n := testing.AllocsPerRun(100, func() { s.Observe("GetObject", 200, time.Millisecond, 10, 10) }); n != 0 {
		t.Fatalf("Observe allocates %v times per call", n)
	}
}

func BenchmarkS3Observe(b *testing.B) {
	s, err := NewS3(New().Registerer())
	if err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.Observe("GetObject", 200, time.Millisecond, 0, 4096)
		}
	})
}

// userAuth is a fake Authenticator: the X-Test-User header names the signer.
type userAuth map[string]bool

func (a userAuth) Authenticate(r *http.Request) (string, error) {
	u := r.Header.Get("X-Test-User")
	if _, ok := a[u]; !ok {
		return "", errors.New("bad signature")
	}
	return u, nil
}
func (a userAuth) IsAdmin(key string) bool { return a[key] }

func TestHandlerAuth(t *testing.T) {
	r := New()
	if _, err := r.Handler(Auth{}); !errors.Is(err, ErrNoAuth) {
		t.Fatalf("Handler(Auth{}) = %v", err)
	}
	users := userAuth{"root": true, "alice": false}
	for _, tc := range []struct {
		name    string
		auth    Auth
		headers map[string]string
		status  int
	}{
		{"public", Auth{Public: true}, nil, 200},
		{"token", Auth{BearerToken: "s3cret"}, map[string]string{"Authorization": "Bearer s3cret"}, 200},
		{"wrong token", Auth{BearerToken: "s3cret"}, map[string]string{"Authorization": "Bearer s3cre"}, 401},
		{"token when none configured", Auth{Authenticator: users}, map[string]string{"Authorization": "Bearer "}, 401},
		{"nothing", Auth{BearerToken: "s3cret", Authenticator: users}, nil, 401},
		{"sigv4 admin", Auth{BearerToken: "s3cret", Authenticator: users}, map[string]string{"Authorization": "AWS4-HMAC-SHA256 ...", "X-Test-User": "root"}, 200},
		{"sigv4 user", Auth{Authenticator: users}, map[string]string{"Authorization": "AWS4-HMAC-SHA256 ...", "X-Test-User": "alice"}, 403},
		{"sigv4 unknown", Auth{Authenticator: users}, map[string]string{"Authorization": "AWS4-HMAC-SHA256 ...", "X-Test-User": "eve"}, 401},
		{"sigv4 without authenticator", Auth{BearerToken: "s3cret"}, map[string]string{"X-Test-User": "root"}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := r.Handler(tc.auth)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			req, _ := http.NewRequest("GET", srv.URL+Path, nil)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status == 200 && !strings.Contains(string(body), "go_goroutines") {
				t.Fatalf("exposition lacks go_goroutines: %.200s", body)
			}
			if tc.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}
