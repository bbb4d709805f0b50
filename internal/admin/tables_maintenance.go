package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// TablesMaintenance is the optional capability of a TablesAdmin that runs
// table maintenance. progress is called for each step; the first call
// starts the streamed answer, so an error returned before it is answered
// as an ordinary admin error. Without it the call answers 501.
type TablesMaintenance interface {
	MaintainTable(ctx context.Context, warehouse string, req adminclient.MaintenanceRequest,
		progress func(adminclient.MaintenanceEvent)) (adminclient.MaintenanceSummary, error)
}

// tablesMaintenanceRoutes are the table maintenance calls.
var tablesMaintenanceRoutes = []route{
	{http.MethodPost, adminclient.PathWarehouses + "/{name}" + adminclient.PathWarehouseMaintenanceSuffix,
		"admin.MaintainTable", (*Server).maintainTable},
}

// maintenanceStream writes a maintenance answer as NDJSON lines, starting
// the 200 answer at the first line.
type maintenanceStream struct {
	w       http.ResponseWriter
	enc     *json.Encoder
	started bool
}

func (m *maintenanceStream) send(ev adminclient.MaintenanceEvent) {
	if !m.started {
		m.started = true
		m.w.Header().Set("Content-Type", adminclient.ContentTypeNDJSON)
		m.w.Header().Set("X-Content-Type-Options", "nosniff")
		m.w.WriteHeader(http.StatusOK)
		m.enc = json.NewEncoder(m.w)
	}
	_ = m.enc.Encode(ev)
	if f, ok := m.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *Server) maintainTable(w http.ResponseWriter, r *http.Request, c *call) error {
	var req adminclient.MaintenanceRequest
	if err := s.readTablesBody(w, r, &req); err != nil {
		return err
	}
	name := r.PathValue("name")
	c.msg = fmt.Sprintf("warehouse %s maintenance %s.%s expire=%t orphans=%t dry-run=%t", name,
		strings.Join(req.Namespace, "."), req.Name, req.ExpireSnapshots, req.RemoveOrphans, req.DryRun)
	t, ok := s.cfg.Tables.(TablesMaintenance)
	if !ok {
		return errTablesUnavailable
	}
	out := &maintenanceStream{w: w}
	sum, err := t.MaintainTable(r.Context(), name, req, out.send)
	switch {
	case err != nil && !out.started:
		return err
	case err != nil:
		_, body, internal := classify(err)
		if internal {
			s.log.Error("table maintenance failed", "warehouse", name, "table", req.Name, "err", err)
		}
		out.send(adminclient.MaintenanceEvent{Error: &body})
		return nil
	}
	out.send(adminclient.MaintenanceEvent{Summary: &sum})
	return nil
}
