package rest

import (
	"fmt"
	"net/http"

	"github.com/twinlake/twinlake/internal/catalog"
)

func viewResponse(v *catalog.View) loadResponse {
	return loadResponse{MetadataLocation: v.MetadataLocation, Metadata: v.MetadataJSON, Config: map[string]string{}}
}

// writeViewResult answers a create or replace; a keyed call records the
// metadata file as its answer.
func writeViewResult(w http.ResponseWriter, c *call, v *catalog.View) {
	c.ref = &answerRef{kind: catalog.KindView, location: v.MetadataLocation}
	writeLoad(w, viewResponse(v))
}

func (s *Server) listViews(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := page(r)
	if err != nil {
		return err
	}
	ids, next, err := s.cat.ListViews(r.Context(), c.params["prefix"], namespaceParam(c), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, listIdentifiersResponse{Identifiers: identifiers(ids), NextPageToken: next})
	return nil
}

func (s *Server) createView(w http.ResponseWriter, r *http.Request, c *call) error {
	var req createViewRequest
	if err := s.readJSON(w, r, &req); err != nil {
		return err
	}
	id := catalog.Ident{Namespace: namespaceParam(c), Name: req.Name}
	c.msg = id.String()
	v, err := s.cat.CreateView(r.Context(), c.params["prefix"], catalog.CreateViewRequest{
		Ident: id, Schema: req.Schema, Location: req.Location, Properties: req.Properties, ViewVersion: req.ViewVersion,
	})
	if err != nil {
		return err
	}
	writeViewResult(w, c, v)
	return nil
}

func (s *Server) loadView(w http.ResponseWriter, r *http.Request, c *call) error {
	v, err := s.cat.LoadView(r.Context(), c.params["prefix"], tableIdent(c, "view"))
	if err != nil {
		return err
	}
	writeLoad(w, viewResponse(v))
	return nil
}

func (s *Server) viewExists(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := s.cat.ViewExists(r.Context(), c.params["prefix"], tableIdent(c, "view")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) replaceView(w http.ResponseWriter, r *http.Request, c *call) error {
	var req commitViewRequest
	if err := s.readJSON(w, r, &req); err != nil {
		return err
	}
	id := tableIdent(c, "view")
	v, err := s.cat.CommitView(r.Context(), c.params["prefix"], catalog.ViewCommit{
		Ident: id, Requirements: req.Requirements, Updates: req.Updates,
	})
	if err != nil {
		return err
	}
	c.msg = fmt.Sprintf("%s version=%d", id, v.Version)
	writeViewResult(w, c, v)
	return nil
}

func (s *Server) dropView(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := s.cat.DropView(r.Context(), c.params["prefix"], tableIdent(c, "view")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) renameView(w http.ResponseWriter, r *http.Request, c *call) error {
	from, to, err := s.readRename(w, r, c)
	if err != nil {
		return err
	}
	if err := s.cat.RenameView(r.Context(), c.params["prefix"], from, to); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
