package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// Healer checks a site's stored data against its metadata and repairs what
// it can.
type Healer interface {
	HealScan(ctx context.Context, o adminclient.HealOptions) (adminclient.HealReport, error)
}

// errHealUnavailable is answered (501) when the server has no healer
// (Config.Heal is nil).
var errHealUnavailable = errors.New("this server cannot heal")

var healRoutes = []route{
	{http.MethodPost, adminclient.PathHeal, "admin.Heal", (*Server).heal},
}

// heal runs a heal scan (?scan=true, the only kind) at ?rate records per
// second, or reports only with ?dry-run=true. It answers when the scan is
// done; the scan takes no lock, so the site serves meanwhile.
func (s *Server) heal(w http.ResponseWriter, r *http.Request, c *call) error {
	if s.cfg.Heal == nil {
		return errHealUnavailable
	}
	q := r.URL.Query()
	if q.Get("scan") != "true" {
		return fmt.Errorf("%w: a heal checks the blob files against the metadata: pass scan=true", ErrBadRequest)
	}
	dryRun, err := strconv.ParseBool(cmpOr(q.Get("dry-run"), "false"))
	if err != nil {
		return fmt.Errorf("%w: dry-run %q", ErrBadRequest, q.Get("dry-run"))
	}
	deep, err := strconv.ParseBool(cmpOr(q.Get("deep"), "false"))
	if err != nil {
		return fmt.Errorf("%w: deep %q", ErrBadRequest, q.Get("deep"))
	}
	rate := adminclient.HealDefaultRate
	if v := q.Get("rate"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < adminclient.HealMinRate || n > adminclient.HealMaxRate {
			return fmt.Errorf("%w: rate %q: want %d to %d records per second", ErrBadRequest, v,
				adminclient.HealMinRate, adminclient.HealMaxRate)
		}
		rate = n
	}
	rep, err := s.cfg.Heal.HealScan(r.Context(), adminclient.HealOptions{DryRun: dryRun, Rate: rate, Deep: deep})
	if err != nil {
		return err
	}
	c.msg = fmt.Sprintf("heal scan: %d blob files, %d orphans (%d removed), %d missing, %d degraded (%d shards rebuilt)",
		rep.BlobFiles, rep.Orphans, rep.Removed, rep.MissingCount, rep.Degraded, rep.ShardsRebuilt)
	writeJSON(w, http.StatusOK, rep)
	return nil
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
