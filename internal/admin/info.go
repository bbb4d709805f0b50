package admin

import (
	"net/http"
)

// serverInfo answers GET info with the site's identity and usage.
func (s *Server) serverInfo(w http.ResponseWriter, r *http.Request, _ *call) error {
	info, err := s.cfg.Info.Info(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, info)
	return nil
}
