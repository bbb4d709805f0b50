package s3api

import (
	"io"
	"net/http"

	"github.com/twinlake/twinlake/internal/lifecycle"
	"github.com/twinlake/twinlake/internal/objects"
)

// Bucket lifecycle, as S3 serves it on ?lifecycle: the configuration is
// validated here (internal/lifecycle), stored in the bucket record and
// replicated as a bucket setting; the site's lifecycle run carries it out
// (objects.RunLifecycle).

var errNoSuchLifecycle = apiErr("NoSuchLifecycleConfiguration", http.StatusNotFound, "The lifecycle configuration does not exist")

func (s *Server) getBucketLifecycle(req *request) error {
	b, err := s.obj.Bucket(req.ctx, req.bucket)
	if err != nil {
		return err
	}
	if len(b.Lifecycle) == 0 {
		return errNoSuchLifecycle
	}
	writeStoredXML(req.w, b.Lifecycle)
	return nil
}

func (s *Server) putBucketLifecycle(req *request) error {
	data, err := io.ReadAll(io.LimitReader(req.r.Body, lifecycle.MaxDocumentSize+1))
	if err != nil {
		return err
	}
	cfg, err := lifecycle.Parse(data)
	if err != nil {
		if e, ok := lifecycle.IsRefusal(err); ok {
			status := http.StatusBadRequest
			if e.Code == "NotImplemented" {
				status = http.StatusNotImplemented
			}
			return apiErr(e.Code, status, e.Msg)
		}
		return err
	}
	if err := s.obj.SetBucketLifecycle(req.ctx, req.bucket, cfg.Marshal()); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}

// deleteBucketLifecycle removes the configuration: 204 even when there is
// none, as S3 answers.
func (s *Server) deleteBucketLifecycle(req *request) error {
	b, err := s.obj.Bucket(req.ctx, req.bucket)
	if err != nil {
		return err
	}
	if len(b.Lifecycle) > 0 {
		if err := s.obj.SetBucketLifecycle(req.ctx, req.bucket, nil); err != nil {
			return err
		}
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

// setExpirationHeader sets x-amz-expiration on a response about the
// current version v of the request's key when a lifecycle rule expires it.
func (s *Server) setExpirationHeader(req *request, v *objects.Version) {
	if e := s.obj.LifecycleExpiry(req.bucket, req.key, v); e != "" {
		req.w.Header().Set("x-amz-expiration", e)
	}
}
