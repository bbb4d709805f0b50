package catalog

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"
)

// TestMaintenanceDueCursor: a tick reads the due range from where the last
// one found its first due table (not from the range's start, over the
// tombstones of every due time rescheduled since), and every table is
// still maintained once per interval, one created meanwhile included.
func TestMaintenanceDueCursor(t *testing.T) {
	c, _ := newTestCatalog(t)
	ctx := context.Background()
	t0 := time.Now().Truncate(time.Second)
	now := t0
	c.cfg.Now = func() time.Time { return now }
	create := func(name string) {
		t.Helper()
		if _, err := c.CreateTable(ctx, "lake", CreateTableRequest{Ident: Ident{Namespace: []string{"ns"}, Name: name}, Schema: unitSchema}); err != nil {
			t.Fatal(err)
		}
	}
	dueOf := func(name string) int64 {
		t.Helper()
		v, err := c.meta.Get(maintRevKey("lake", Ident{Namespace: []string{"ns"}, Name: name}))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return int64(binary.BigEndian.Uint64(v))
	}
	for i := range 3 {
		create(fmt.Sprintf("t%d", i))
	}
	st := &maintScheduler{}
	s := MaintenanceSchedule{Interval: func() time.Duration { return time.Hour }}
	tick := func(at time.Time) {
		t.Helper()
		now = at
		if err := c.maintenanceTick(ctx, st, s, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	// The first tick finds the three tables, maintains them and makes
	// each due an interval later.
	tick(t0)
	for i := range 3 {
		if got, want := dueOf(fmt.Sprintf("t%d", i)), t0.Add(time.Hour).UnixMilli(); got != want {
			t.Fatalf("t%d due at %d, want %d", i, got, want)
		}
	}
	// Nothing is due a second later: the next read starts past now, not
	// at the rescheduled entries' old due time.
	tick(t0.Add(time.Second))
	if want := t0.Add(time.Second).UnixMilli() + 1; st.dueFrom != want {
		t.Fatalf("due cursor %d, want %d", st.dueFrom, want)
	}
	// A table created meanwhile is found by the next sweep, an interval
	// on, and maintained with the others.
	create("late")
	at := t0.Add(time.Hour + time.Millisecond)
	tick(at)
	for _, name := range []string{"t0", "t1", "t2", "late"} {
		if got, want := dueOf(name), at.Add(time.Hour).UnixMilli(); got != want {
			t.Errorf("%s due at %d, want %d", name, got, want)
		}
	}
}
