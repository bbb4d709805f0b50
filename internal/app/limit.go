package app

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/metrics"
	"github.com/twinlake/twinlake/internal/s3api"
)

// limitS3 puts the S3 API behind api requests_max and requests_deadline,
// following the settings as they change. Only the S3 API is limited: health
// probes, admin, peer and catalog requests never queue behind client load.
func (s *Server) limitS3(h http.Handler) (http.Handler, error) {
	reg := s.metrics.Registerer()
	rejected := prometheus.NewCounter(prometheus.CounterOpts{
		Name: metrics.S3RejectedRequestsTotal, Help: "S3 requests answered 503 SlowDown after queueing api requests_deadline under api requests_max.",
	})
	if err := reg.Register(rejected); err != nil {
		return nil, err
	}
	lim := s3api.NewLimiter(h, s3api.LimitConfig{Rejected: rejected})
	if err := reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: metrics.S3WaitingRequests, Help: "S3 requests queued for a slot under api requests_max.",
	}, func() float64 { return float64(lim.Waiting()) })); err != nil {
		return nil, err
	}
	apply := func() {
		lim.SetLimit(s.settings.Int(config.SubsysAPI, config.APIRequestsMax),
			s.settings.Duration(config.SubsysAPI, config.APIRequestsDeadline))
	}
	apply()
	s.settings.Subscribe(func(subsys string) {
		if subsys == config.SubsysAPI {
			apply()
		}
	})
	return lim, nil
}

// followBodyTimeouts keeps the S3 API's body deadlines on api
// body_idle_timeout and body_deadline, and its SSE-C transport rule on api
// ssec_allow_http, as they change.
func (s *Server) followBodyTimeouts(h *s3api.Server) {
	apply := func() {
		h.SetBodyTimeouts(s.settings.Duration(config.SubsysAPI, config.APIBodyIdleTimeout),
			s.settings.Duration(config.SubsysAPI, config.APIBodyDeadline))
		h.SetSSECAllowHTTP(s.settings.Bool(config.SubsysAPI, config.APISSECAllowHTTP))
	}
	apply()
	s.settings.Subscribe(func(subsys string) {
		if subsys == config.SubsysAPI {
			apply()
		}
	})
}
