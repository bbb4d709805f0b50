package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// Quotas reads and sets buckets' quotas.
type Quotas interface {
	BucketQuota(ctx context.Context, bucket string) (adminclient.BucketQuota, error)
	SetBucketQuota(ctx context.Context, bucket string, bytes int64) error
}

// errQuotaUnavailable is answered (501) when the server has no quotas
// (Config.Quotas is nil).
var errQuotaUnavailable = errors.New("this server has no bucket quotas")

var quotaRoutes = []route{
	{http.MethodGet, adminclient.PathBucketQuota + "/{bucket}", "admin.GetBucketQuota", (*Server).getBucketQuota},
	{http.MethodPut, adminclient.PathBucketQuota + "/{bucket}", "admin.SetBucketQuota", (*Server).setBucketQuota},
}

func (s *Server) getBucketQuota(w http.ResponseWriter, r *http.Request, _ *call) error {
	if s.cfg.Quotas == nil {
		return errQuotaUnavailable
	}
	q, err := s.cfg.Quotas.BucketQuota(r.Context(), r.PathValue("bucket"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}

func (s *Server) setBucketQuota(w http.ResponseWriter, r *http.Request, c *call) error {
	if s.cfg.Quotas == nil {
		return errQuotaUnavailable
	}
	var req adminclient.BucketQuota
	if err := s.readJSON(r, &req); err != nil {
		return err
	}
	if req.QuotaType != "" && req.QuotaType != adminclient.QuotaTypeHard {
		return fmt.Errorf("%w: quota type %q: only %q quotas exist", ErrBadRequest, req.QuotaType, adminclient.QuotaTypeHard)
	}
	c.msg = fmt.Sprintf("bucket %s quota %d bytes", r.PathValue("bucket"), req.Quota)
	return done(w, s.cfg.Quotas.SetBucketQuota(r.Context(), r.PathValue("bucket"), req.Quota))
}
