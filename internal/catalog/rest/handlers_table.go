package rest

import (
	"fmt"
	"net/http"

	"github.com/twinlake/twinlake/internal/catalog"
)

func tableResponse(t *catalog.Table) loadResponse {
	return loadResponse{MetadataLocation: t.MetadataLocation, Metadata: t.MetadataJSON, Config: map[string]string{}}
}

// writeTableResult answers a create, register or commit with the table's
// full metadata and its ETag; a keyed call records the metadata file as its
// answer.
func writeTableResult(w http.ResponseWriter, c *call, t *catalog.Table, body loadResponse) {
	if t.MetadataLocation != "" {
		w.Header().Set("ETag", etag(t.MetadataLocation, snapshotsAll))
		c.ref = &answerRef{kind: catalog.KindTable, location: t.MetadataLocation}
	}
	writeLoad(w, body)
}

func (s *Server) listTables(w http.ResponseWriter, r *http.Request, c *call) error {
	p, err := page(r)
	if err != nil {
		return err
	}
	ids, next, err := s.cat.ListTables(r.Context(), c.params["prefix"], namespaceParam(c), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, listIdentifiersResponse{Identifiers: identifiers(ids), NextPageToken: next})
	return nil
}

func (s *Server) createTable(w http.ResponseWriter, r *http.Request, c *call) error {
	var req createTableRequest
	if err := s.readJSON(w, r, &req); err != nil {
		return err
	}
	id := catalog.Ident{Namespace: namespaceParam(c), Name: req.Name}
	c.msg = id.String()
	cr := catalog.CreateTableRequest{Ident: id, Schema: req.Schema, Location: req.Location,
		Properties: req.Properties, Stage: req.StageCreate}
	if req.PartitionSpec != nil {
		cr.PartitionSpec = &req.PartitionSpec.PartitionSpec
	}
	if req.WriteOrder != nil {
		cr.SortOrder = &req.WriteOrder.SortOrder
	}
	t, err := s.cat.CreateTable(r.Context(), c.params["prefix"], cr)
	if err != nil {
		return err
	}
	if req.StageCreate {
		c.msg += " staged"
	}
	body, err := s.withVended(r, c, t, tableResponse(t))
	if err != nil {
		return err
	}
	writeTableResult(w, c, t, body)
	return nil
}

// loadTable answers the table's metadata (all snapshots, or with
// snapshots=refs only the referenced ones) with its ETag, or 304 when
// If-None-Match names the ETag.
func (s *Server) loadTable(w http.ResponseWriter, r *http.Request, c *call) error {
	mode, err := snapshotsMode(r)
	if err != nil {
		return err
	}
	t, err := s.cat.LoadTable(r.Context(), c.params["prefix"], tableIdent(c, "table"))
	if err != nil {
		return err
	}
	tag := etag(t.MetadataLocation, mode)
	w.Header().Set("ETag", tag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && noneMatch(inm, tag) {
		c.msg = "not modified"
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	body, err := s.withVended(r, c, t, tableResponse(t))
	if err != nil {
		return err
	}
	if mode == snapshotsRefs {
		if body.Metadata, err = s.refs.get(t.MetadataLocation, t.MetadataJSON); err != nil {
			return err
		}
	}
	writeLoad(w, body)
	return nil
}

func (s *Server) tableExists(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := s.cat.TableExists(r.Context(), c.params["prefix"], tableIdent(c, "table")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) commitTable(w http.ResponseWriter, r *http.Request, c *call) error {
	var req commitTableRequest
	if err := s.readJSON(w, r, &req); err != nil {
		return err
	}
	id := tableIdent(c, "table")
	if req.Identifier != nil {
		bodyID, _ := identOf(req.Identifier)
		if bodyID.String() != id.String() {
			return fmt.Errorf("%w: body identifier %s does not match the path's %s", errBadRequest, bodyID, id)
		}
	}
	t, err := s.cat.CommitTable(r.Context(), c.params["prefix"], catalog.TableCommit{
		Ident: id, Requirements: req.Requirements, Updates: req.Updates,
	})
	if err != nil {
		return err
	}
	c.msg = fmt.Sprintf("%s version=%d", id, t.Version)
	writeTableResult(w, c, t, loadResponse{MetadataLocation: t.MetadataLocation, Metadata: t.MetadataJSON})
	return nil
}

func (s *Server) dropTable(w http.ResponseWriter, r *http.Request, c *call) error {
	purge := r.URL.Query().Get("purgeRequested") == "true"
	id := tableIdent(c, "table")
	c.msg = fmt.Sprintf("%s purge=%t", id, purge)
	if err := s.cat.DropTable(r.Context(), c.params["prefix"], id, purge); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// reportMetrics accepts a scan or commit report and discards it; its type
// goes to the trace event.
func (s *Server) reportMetrics(w http.ResponseWriter, r *http.Request, c *call) error {
	var report struct {
		ReportType string `json:"report-type"`
		TableName  string `json:"table-name"`
	}
	if err := s.readJSON(w, r, &report); err != nil {
		return err
	}
	if err := s.cat.TableExists(r.Context(), c.params["prefix"], tableIdent(c, "table")); err != nil {
		return err
	}
	c.msg = "report-type=" + report.ReportType
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) registerTable(w http.ResponseWriter, r *http.Request, c *call) error {
	var req registerTableRequest
	if err := s.readJSON(w, r, &req); err != nil {
		return err
	}
	id := catalog.Ident{Namespace: namespaceParam(c), Name: req.Name}
	c.msg = id.String() + " " + req.MetadataLocation
	if req.Overwrite {
		c.msg += " overwrite"
	}
	t, err := s.cat.RegisterTable(r.Context(), c.params["prefix"], id, req.MetadataLocation,
		catalog.RegisterOptions{Overwrite: req.Overwrite})
	if err != nil {
		return err
	}
	writeTableResult(w, c, t, tableResponse(t))
	return nil
}

func (s *Server) renameTable(w http.ResponseWriter, r *http.Request, c *call) error {
	from, to, err := s.readRename(w, r, c)
	if err != nil {
		return err
	}
	if err := s.cat.RenameTable(r.Context(), c.params["prefix"], from, to); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) readRename(w http.ResponseWriter, r *http.Request, c *call) (catalog.Ident, catalog.Ident, error) {
	var req renameRequest
	if err := s.readJSON(w, r, &req); err != nil {
		return catalog.Ident{}, catalog.Ident{}, err
	}
	from, err := identOf(req.Source)
	if err != nil {
		return catalog.Ident{}, catalog.Ident{}, err
	}
	to, err := identOf(req.Destination)
	if err != nil {
		return catalog.Ident{}, catalog.Ident{}, err
	}
	c.msg = from.String() + " -> " + to.String()
	return from, to, nil
}

// commitTransaction applies every table change or none.
func (s *Server) commitTransaction(w http.ResponseWriter, r *http.Request, c *call) error {
	var req commitTransactionRequest
	if err := s.readJSON(w, r, &req); err != nil {
		return err
	}
	commits := make([]catalog.TableCommit, len(req.TableChanges))
	for i, ch := range req.TableChanges {
		id, err := identOf(ch.Identifier)
		if err != nil {
			return err
		}
		commits[i] = catalog.TableCommit{Ident: id, Requirements: ch.Requirements, Updates: ch.Updates}
	}
	tables, err := s.cat.CommitTransaction(r.Context(), c.params["prefix"], commits)
	if err != nil {
		return err
	}
	c.msg = fmt.Sprintf("%d tables", len(tables))
	w.WriteHeader(http.StatusNoContent)
	return nil
}
