package catalog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twinlake/twinlake/internal/meta"
)

// Scheduled maintenance. Every table has a due time in a schedule index
// ordered by time, so each tick reads only the tables that are due, not
// every table:
//
//	c/md/<due ms, 8 bytes big-endian><warehouse>\0<ns>\0<name>   (empty)
//	c/mr/<warehouse>\0<ns>\0<name>                               due ms
//
// A table gets its first due time from the discovery sweep, which walks the
// table entries a bounded batch per tick and once per interval, so that new,
// renamed, undropped and promoted (after a failover) tables are scheduled
// without a hook in every path that creates one. When a table is due, its
// policy (maintenance_settings.go) decides whether it is maintained; either
// way it is due again one interval later. A table that no longer exists
// under the name drops out.

const (
	pfxMaintDue = "c/md/"
	pfxMaintRev = "c/mr/"
	// sweepBatch bounds the table entries one tick's discovery reads.
	sweepBatch = 256
	// dueBatch bounds the tables one tick maintains.
	dueBatch = 32
)

// MaintenanceSchedule configures RunMaintenance.
type MaintenanceSchedule struct {
	// Interval is how often each table is due (the site setting tables
	// maintenance_interval); read every tick, so a change applies at once.
	Interval func() time.Duration
	// Owns reports whether this site maintains the warehouse: the primary
	// does, a Tables replica does not (its primary's deletions replicate).
	Owns func(ctx context.Context, wh string) bool
	// Report, if set, is called after each scheduled run.
	Report func(MaintenanceResult, error)
}

// maintScheduler is the state of RunMaintenance between ticks.
type maintScheduler struct {
	cursor    []byte // next table entry key of the running sweep (nil: none running)
	lastSweep time.Time
	// clamp: the interval shrank, so the running sweep also brings due
	// times later than one new interval forward.
	clamp        bool
	lastInterval time.Duration
	// dueFrom is the due time (Unix ms) the next tick reads the due range
	// from: the first entry the last tick found, or past its end. Only
	// the ticks write due times (this tick's now or later), so none lands
	// below it; the tombstones a tick's rescheduling leaves at the front
	// of the range are not read again. The range is read from its start
	// when dueFull is dueRescan old, or the interval changed.
	dueFrom int64
	dueFull time.Time
}

// dueRescan is how often the due range is read from its start: the safety
// net should the clock step back.
const dueRescan = 10 * time.Minute

func maintRevKey(wh string, id Ident) []byte { return entryKey(pfxMaintRev, wh, id) }

func maintDueKey(dueMS int64, wh string, id Ident) []byte {
	k := binary.BigEndian.AppendUint64([]byte(pfxMaintDue), uint64(dueMS))
	return append(k, entryKey("", wh, id)...)
}

// schedule adds to b the table's next due time, replacing its previous one.
func (c *Catalog) schedule(b meta.Batch, wh string, id Ident, dueMS int64) error {
	if prev, err := c.meta.Get(maintRevKey(wh, id)); err == nil && len(prev) == 8 {
		b.Delete(maintDueKey(int64(binary.BigEndian.Uint64(prev)), wh, id))
	} else if err != nil && !errors.Is(err, meta.ErrNotFound) {
		return err
	}
	b.Set(maintDueKey(dueMS, wh, id), []byte{})
	b.Set(maintRevKey(wh, id), binary.BigEndian.AppendUint64(nil, uint64(dueMS)))
	return nil
}

// RunMaintenance maintains the tables whose policy enables it, each once
// per interval, until ctx ends.
func (c *Catalog) RunMaintenance(ctx context.Context, s MaintenanceSchedule) {
	st := &maintScheduler{}
	for {
		// A tick reads only the due range, so it can be frequent: an
		// interval change or a due table waits at most a second.
		t := time.NewTimer(min(max(s.Interval()/4, 100*time.Millisecond), time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		interval := s.Interval()
		if err := c.maintenanceTick(ctx, st, s, interval); err != nil && ctx.Err() == nil {
			c.log.Warn("scheduled table maintenance", "err", err)
		}
	}
}

// maintenanceTick runs one discovery step and the due tables.
func (c *Catalog) maintenanceTick(ctx context.Context, st *maintScheduler, s MaintenanceSchedule, interval time.Duration) error {
	now := c.cfg.Now()
	if st.lastInterval != 0 && interval < st.lastInterval {
		st.cursor, st.lastSweep, st.clamp = []byte(pfxTable), now, true
	}
	if interval != st.lastInterval || now.Sub(st.dueFull) >= dueRescan {
		st.dueFrom, st.dueFull = 0, now
	}
	st.lastInterval = interval
	if st.cursor == nil && (st.lastSweep.IsZero() || now.Sub(st.lastSweep) >= interval) {
		st.cursor, st.lastSweep = []byte(pfxTable), now
	}
	if st.cursor != nil {
		if err := c.sweepStep(st, now, interval); err != nil {
			return err
		}
	}
	due, next, err := c.dueTables(st.dueFrom, now)
	if err != nil {
		return err
	}
	st.dueFrom = next
	settings := map[string]*MaintenanceSettings{}
	for _, d := range due {
		if ctx.Err() != nil {
			return nil
		}
		c.runDue(ctx, d.wh, d.id, s, settings)
		b := c.meta.NewBatch()
		if _, err := c.getEntry(tableKind, d.wh, d.id); err == nil {
			if err := c.schedule(b, d.wh, d.id, c.cfg.Now().Add(interval).UnixMilli()); err != nil {
				return err
			}
		} else {
			b.Delete(maintDueKey(d.dueMS, d.wh, d.id))
			b.Delete(maintRevKey(d.wh, d.id))
		}
		if err := b.Commit(false); err != nil {
			return err
		}
	}
	return nil
}

// sweepStep schedules (due now) up to sweepBatch tables that have no due
// time yet, continuing the running sweep; with st.clamp it also brings due
// times beyond one interval from now forward to it.
func (c *Catalog) sweepStep(st *maintScheduler, now time.Time, interval time.Duration) error {
	end := meta.PrefixEnd([]byte(pfxTable))
	b := c.meta.NewBatch()
	n := 0
	var last []byte
	err := meta.Scan(c.meta, st.cursor, end, func(k, _ []byte) (bool, error) {
		if n == sweepBatch {
			return false, nil
		}
		n++
		last = append(last[:0], k...)
		wh, id, err := splitEntryKey(pfxTable, k)
		if err != nil {
			return false, err
		}
		v, err := c.meta.Get(maintRevKey(wh, id))
		switch {
		case errors.Is(err, meta.ErrNotFound):
			return true, c.schedule(b, wh, id, now.UnixMilli())
		case err != nil:
			return false, err
		case st.clamp && len(v) == 8 && int64(binary.BigEndian.Uint64(v)) > now.Add(interval).UnixMilli():
			return true, c.schedule(b, wh, id, now.Add(interval).UnixMilli())
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	if n < sweepBatch {
		st.cursor, st.clamp = nil, false
	} else {
		st.cursor = append(last, 0)
	}
	return b.Commit(false)
}

type dueTable struct {
	dueMS int64
	wh    string
	id    Ident
}

// dueTables returns up to dueBatch tables due at now, soonest first,
// reading the due range from fromMS; and where the next read can start:
// the first table's due time, or past now when none is due.
func (c *Catalog) dueTables(fromMS int64, now time.Time) ([]dueTable, int64, error) {
	lo := binary.BigEndian.AppendUint64([]byte(pfxMaintDue), uint64(max(fromMS, 0)))
	hi := binary.BigEndian.AppendUint64([]byte(pfxMaintDue), uint64(now.UnixMilli()+1))
	var out []dueTable
	err := meta.Scan(c.meta, lo, hi, func(k, _ []byte) (bool, error) {
		if len(out) == dueBatch {
			return false, nil
		}
		rest := k[len(pfxMaintDue):]
		if len(rest) < 8 {
			return false, fmt.Errorf("catalog: bad maintenance key %q", k)
		}
		wh, id, err := splitEntryKey("", rest[8:])
		if err != nil {
			return false, err
		}
		out = append(out, dueTable{dueMS: int64(binary.BigEndian.Uint64(rest[:8])), wh: wh, id: id})
		return true, nil
	})
	if err != nil {
		return nil, fromMS, err
	}
	next := max(fromMS, now.UnixMilli()+1)
	if len(out) > 0 {
		next = out[0].dueMS
	}
	return out, next, nil
}

// runDue maintains one due table if this site owns its warehouse and its
// policy enables maintenance.
func (c *Catalog) runDue(ctx context.Context, wh string, id Ident, s MaintenanceSchedule, settings map[string]*MaintenanceSettings) {
	if s.Owns != nil && !s.Owns(ctx, wh) {
		return
	}
	ws := settings[wh]
	if ws == nil {
		set, err := c.WarehouseSettings(ctx, wh)
		if err != nil {
			c.log.Warn("scheduled maintenance: warehouse settings", "warehouse", wh, "err", err)
			return
		}
		ws = &set.Maintenance
		settings[wh] = ws
	}
	e, err := c.getEntry(tableKind, wh, id)
	if err != nil {
		return
	}
	md, err := c.parsedTable(e)
	if err != nil {
		return
	}
	if pol := resolvePolicy(*ws, md.Properties()); !pol.enabled || pol.gcDisabled {
		return
	}
	res, err := c.MaintainTable(ctx, wh, id, MaintenanceOptions{})
	if err != nil && !errors.Is(err, context.Canceled) {
		c.log.Warn("scheduled maintenance failed", "warehouse", wh, "table", id.String(), "err", err)
	}
	if s.Report != nil {
		s.Report(res, err)
	}
}
