package rest

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// getConfig answers GET /v1/config?warehouse=NAME with the prefix and the
// properties an engine needs to reach the warehouse's files through this
// server's S3 API.
func (s *Server) getConfig(w http.ResponseWriter, r *http.Request, c *call) error {
	wh := r.URL.Query().Get("warehouse")
	wh = strings.TrimSuffix(strings.TrimPrefix(wh, "s3://"), "/")
	if wh == "" {
		return fmt.Errorf("%w: the warehouse query parameter is required (the warehouse bucket name)", errBadRequest)
	}
	if _, err := s.cat.Warehouse(r.Context(), wh); err != nil {
		return err
	}
	c.msg = "warehouse=" + wh
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	writeJSON(w, http.StatusOK, configResponse{
		Defaults: map[string]string{
			"s3.endpoint":          scheme + "://" + r.Host,
			"s3.path-style-access": "true",
			"s3.region":            s.cfg.Region,
		},
		Overrides:              map[string]string{"prefix": wh},
		Endpoints:              advertised,
		IdempotencyKeyLifetime: isoDuration(s.cat.IdempotencyLifetime()),
	})
	return nil
}

func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := page(r)
	if err != nil {
		return err
	}
	var parent []string
	if v := r.URL.Query().Get("parent"); v != "" {
		parent = strings.Split(v, "\x1f")
	}
	nss, next, err := s.cat.ListNamespaces(r.Context(), c.params["prefix"], parent, p)
	if err != nil {
		return err
	}
	if nss == nil {
		nss = [][]string{}
	}
	writeJSON(w, http.StatusOK, listNamespacesResponse{Namespaces: nss, NextPageToken: next})
	return nil
}

func (s *Server) createNamespace(w http.ResponseWriter, r *http.Request, c *call) error {
	var req namespaceBody
	if err := s.readJSON(w, r, &req); err != nil {
		return err
	}
	c.msg = strings.Join(req.Namespace, ".")
	ns, err := s.cat.CreateNamespace(r.Context(), c.params["prefix"], req.Namespace, req.Properties)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, namespaceBody{Namespace: ns.Levels, Properties: ns.Properties})
	return nil
}

func (s *Server) loadNamespace(w http.ResponseWriter, r *http.Request, c *call) error {
	ns, err := s.cat.LoadNamespace(r.Context(), c.params["prefix"], namespaceParam(c))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, namespaceBody{Namespace: ns.Levels, Properties: ns.Properties})
	return nil
}

func (s *Server) namespaceExists(w http.ResponseWriter, r *http.Request, c *call) error {
	if _, err := s.cat.LoadNamespace(r.Context(), c.params["prefix"], namespaceParam(c)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) dropNamespace(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := s.cat.DropNamespace(r.Context(), c.params["prefix"], namespaceParam(c)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) updateNamespace(w http.ResponseWriter, r *http.Request, c *call) error {
	var req updatePropertiesRequest
	if err := s.readJSON(w, r, &req); err != nil {
		return err
	}
	sum, err := s.cat.UpdateNamespace(r.Context(), c.params["prefix"], namespaceParam(c), req.Removals, req.Updates)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, updatePropertiesResponse{Updated: sum.Updated, Removed: sum.Removed, Missing: sum.Missing})
	return nil
}

// isoDuration renders d as an ISO-8601 duration (PT30M, PT24H, PT90S).
func isoDuration(d time.Duration) string {
	sec := int64(d / time.Second)
	switch {
	case sec > 0 && sec%3600 == 0:
		return fmt.Sprintf("PT%dH", sec/3600)
	case sec > 0 && sec%60 == 0:
		return fmt.Sprintf("PT%dM", sec/60)
	}
	return fmt.Sprintf("PT%dS", sec)
}
