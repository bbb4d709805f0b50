package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// requestBuckets are the S3 request duration histogram's upper bounds, in
// seconds: from a cached small GET to a multi-gigabyte upload.
var requestBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}

// S3 records the S3 API's requests. Observe is called once per request by
// the S3 edge; it is safe for concurrent use and, after the first request of
// an api and status, costs one map lookup and a few atomic adds. A nil *S3
// records nothing.
type S3 struct {
	requests *prometheus.CounterVec
	errors   *prometheus.CounterVec
	duration *prometheus.HistogramVec
	received *prometheus.CounterVec
	sent     *prometheus.CounterVec

	children sync.Map // s3Key -> *s3Children
}

type s3Key struct {
	api    string
	status int
}

// s3Children are the label-curried series one (api, status) pair updates.
type s3Children struct {
	requests prometheus.Counter
	errors   prometheus.Counter // nil for statuses below 400
	duration prometheus.Observer
	received prometheus.Counter
	sent     prometheus.Counter
}

// NewS3 registers the S3 request metrics on reg.
func NewS3(reg prometheus.Registerer) (*S3, error) {
	s := &S3{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: S3RequestsTotal, Help: "S3 requests served, by API and HTTP status code.",
		}, []string{LabelAPI, LabelCode}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: S3ErrorsTotal, Help: "S3 requests answered with an error, by API and status class (4xx, 5xx).",
		}, []string{LabelAPI, LabelClass}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: S3RequestDurationSeconds, Help: "Time to serve an S3 request, by API.", Buckets: requestBuckets,
		}, []string{LabelAPI}),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: S3ReceivedBytesTotal, Help: "Request body bytes received by the S3 API, by API.",
		}, []string{LabelAPI}),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: S3SentBytesTotal, Help: "Response body bytes sent by the S3 API, by API.",
		}, []string{LabelAPI}),
	}
	for _, c := range []prometheus.Collector{s.requests, s.errors, s.duration, s.received, s.sent} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Observe records one request of api answered with status after dur, with
// bytesIn request and bytesOut response body bytes.
func (s *S3) Observe(api string, status int, dur time.Duration, bytesIn, bytesOut int64) {
	if s == nil {
		return
	}
	c := s.series(api, status)
	c.requests.Inc()
	if c.errors != nil {
		c.errors.Inc()
	}
	c.duration.Observe(dur.Seconds())
	if bytesIn > 0 {
		c.received.Add(float64(bytesIn))
	}
	if bytesOut > 0 {
		c.sent.Add(float64(bytesOut))
	}
}

func (s *S3) series(api string, status int) *s3Children {
	k := s3Key{api, status}
	if c, ok := s.children.Load(k); ok {
		return c.(*s3Children)
	}
	c := &s3Children{
		requests: s.requests.WithLabelValues(api, strconv.Itoa(status)),
		duration: s.duration.WithLabelValues(api),
		received: s.received.WithLabelValues(api),
		sent:     s.sent.WithLabelValues(api),
	}
	switch {
	case status == http.StatusNotImplemented:
		// An API twinlake does not serve is the client's choice, not a
		// server failure: alerts on the 5xx class must not fire for it.
		c.errors = s.errors.WithLabelValues(api, ClassUnsupported)
	case status >= 500:
		c.errors = s.errors.WithLabelValues(api, "5xx")
	case status >= 400:
		c.errors = s.errors.WithLabelValues(api, "4xx")
	}
	actual, _ := s.children.LoadOrStore(k, c)
	return actual.(*s3Children)
}
