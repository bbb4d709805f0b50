package console

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/trace"
)

// TablesDRView answers GET /api/tables-dr: the scanner's report (a page of
// its entries), the backfill job, the scanner's recent events and the
// warehouses a runbook action may be confirmed with.
type TablesDRView struct {
	Role       string                              `json:"role"`
	Status     adminclient.TablesReplicationStatus `json:"status"`
	Backfill   *adminclient.BackfillJob            `json:"backfill,omitempty"`
	Events     []trace.Event                       `json:"events"`
	EventsFrom time.Time                           `json:"eventsFrom,omitzero"`
	// EventsAllowed is false when the user may not read trace events
	// (admin:ServerTrace).
	EventsAllowed bool `json:"eventsAllowed"`
	// VerifiedAt is, per entry of the page (warehouse/namespace levels
	// joined by U+001F/name/kind), when its verified version was committed.
	VerifiedAt map[string]time.Time `json:"verifiedAt"`
	Warehouses []string             `json:"warehouses"`
	Site       string               `json:"site"`
}

const actionTrace = "admin:ServerTrace"

func (c *Console) tablesDR(w http.ResponseWriter, r *http.Request, cl *call) error {
	offset, limit, err := page(r, 100)
	if err != nil {
		return err
	}
	st, err := cl.cl.admin.TablesReplicationStatus(cl.ctx, offset, limit)
	if err != nil {
		return err
	}
	v := TablesDRView{Role: roleName(st), Status: st, Events: []trace.Event{}}
	if job, err := cl.cl.admin.Backfill(cl.ctx, http.MethodGet); err == nil {
		v.Backfill = &job
	}
	switch {
	case len(st.Events) > 0:
		// The scanner's own record of its notable events, kept since the
		// site started whether or not anyone was looking.
		v.EventsAllowed, v.Events = true, st.Events
	case c.cfg.Authorizer.AllowAdmin(cl.sess.accessKey, actionTrace):
		v.EventsAllowed = true
		if ev, since := c.events.read(); since.IsZero() == false {
			v.Events, v.EventsFrom = ev, since
		}
	}
	v.Warehouses, v.Site = c.confirmNames(cl, st)
	v.VerifiedAt = c.ages(cl, st.Entries)
	writeJSON(w, http.StatusOK, v)
	return nil
}

// confirmNames returns the warehouses a runbook action may be confirmed
// with (those the status pages show and the user may list) and the site's
// name, which confirms when the site holds no warehouse.
func (c *Console) confirmNames(cl *call, st adminclient.TablesReplicationStatus) ([]string, string) {
	var names []string
	if whs, err := cl.cl.admin.ListWarehouses(cl.ctx); err == nil {
		for _, wh := range whs {
			names = append(names, wh.Name)
		}
	}
	for _, e := range st.Entries {
		if !slices.Contains(names, e.Warehouse) {
			names = append(names, e.Warehouse)
		}
	}
	slices.Sort(names)
	site := ""
	if info, err := cl.cl.admin.ServerInfo(cl.ctx); err == nil {
		site = info.SiteName
	}
	if names == nil {
		names = []string{}
	}
	return names, site
}

// RunbookRequest is the body of a runbook action: the typed confirmation.
type RunbookRequest struct {
	Confirm string `json:"confirm"`
}

// RunbookResult answers a runbook action.
type RunbookResult struct {
	Action string `json:"action"`
	Result any    `json:"result"`
}

// runbookActions are the Tables DR page's buttons, each the admin call the
// CLI's table replicate command makes.
var runbookActions = map[string]func(cl *call) (any, error){
	"failover": func(cl *call) (any, error) { return cl.cl.admin.TablesFailover(cl.ctx) },
	"resync-open": func(cl *call) (any, error) {
		return cl.cl.admin.TablesResyncOpen(cl.ctx)
	},
	"rebuild": func(cl *call) (any, error) {
		return cl.cl.admin.TablesResyncRebuild(cl.ctx, true)
	},
	"catalog-reset": func(cl *call) (any, error) {
		return cl.cl.admin.TablesCatalogReset(cl.ctx, true)
	},
	"backfill": func(cl *call) (any, error) {
		return cl.cl.admin.Backfill(cl.ctx, http.MethodPost)
	},
}

func (c *Console) tablesDRAction(w http.ResponseWriter, r *http.Request, cl *call) error {
	name := r.PathValue("action")
	act, ok := runbookActions[name]
	if !ok {
		return fmt.Errorf("%w: no runbook action %q", errNoRoute, name)
	}
	var req RunbookRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	st, err := cl.cl.admin.TablesReplicationStatus(cl.ctx, 0, 1000)
	if err != nil && !isNotReplica(err) {
		return err
	}
	whs, site := c.confirmNames(cl, st)
	if !confirmed(req.Confirm, whs, site) {
		return fmt.Errorf("%w: type the name of a warehouse on this site (%v) or, with none, the site name", errNotConfirmed, whs)
	}
	res, err := act(cl)
	if err != nil {
		return err
	}
	c.log.Info("console runbook action", "action", name, "accessKey", cl.sess.accessKey)
	writeJSON(w, http.StatusOK, RunbookResult{Action: name, Result: res})
	return nil
}

// confirmed reports whether typed names a warehouse, or the site when it
// holds no warehouse.
func confirmed(typed string, warehouses []string, site string) bool {
	if typed == "" {
		return false
	}
	if len(warehouses) == 0 {
		return typed == site
	}
	return slices.Contains(warehouses, typed)
}

func isNotReplica(err error) bool {
	var ae *adminclient.Error
	return errors.As(err, &ae) && ae.Code == adminclient.CodeNotReplica
}
