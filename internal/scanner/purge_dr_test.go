package scanner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

// TestPurgeOnPrimaryKeepsReplicaTablesVerified: tables whose names once
// shared or nested locations (a renamed table and its namesake, a table
// and one in a namespace named like it) live on the primary and are
// verified on the replica; purging two of them on the primary deletes
// only their files, the deletions replicate, and the replica's scanner
// keeps every surviving table verified at its version, readable in full,
// and shows the purged ones gone.
func TestPurgeOnPrimaryKeepsReplicaTablesVerified(t *testing.T) {
	p := newDRPair(t, tablesSettings)
	ctx := context.Background()
	cat := p.catalog(p.primary)
	for _, ns := range []table.Identifier{{"ns"}, {"ns", "a"}} {
		if err := cat.CreateNamespace(ctx, ns, nil); err != nil {
			t.Fatal(err)
		}
	}
	create := func(id table.Identifier, rows int64) {
		t.Helper()
		if _, err := cat.CreateTable(ctx, id, icetest.Schema); err != nil {
			t.Fatal(err)
		}
		if _, err := icetest.AppendRetry(ctx, cat, id, 0, rows); err != nil {
			t.Fatal(err)
		}
	}
	create(table.Identifier{"ns", "x"}, 3)
	if _, err := cat.RenameTable(ctx, table.Identifier{"ns", "x"}, table.Identifier{"ns", "y"}); err != nil {
		t.Fatal(err)
	}
	create(table.Identifier{"ns", "x"}, 4)
	create(table.Identifier{"ns", "a"}, 5)
	create(table.Identifier{"ns", "a", "t"}, 6)
	versions := map[string]int64{}
	for _, id := range []table.Identifier{{"ns", "x"}, {"ns", "y"}, {"ns", "a"}, {"ns", "a", "t"}} {
		tbl, err := cat.LoadTable(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		ns, name := joinNS(id), id[len(id)-1]
		versions[ns+"."+name] = metadataVersion(tbl)
		waitVerified(t, p.replica, ns, name, versions[ns+"."+name], 20*time.Second)
	}

	for _, id := range []table.Identifier{{"ns", "x"}, {"ns", "a"}} {
		if err := cat.PurgeTable(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	testsite.Eventually(t, 15*time.Second, func() error { return testsite.Drained(p.primary.Site) })
	// Both purged tables are gone on the replica; the survivors stay
	// verified at their version and read in full there.
	testsite.Eventually(t, 20*time.Second, func() error {
		for _, gone := range [][2]string{{"ns", "x"}, {"ns", "a"}} {
			if e, ok := entry(p.replica, gone[0], gone[1]); ok && e.Status != "Deleted" {
				return fmt.Errorf("%s.%s on the replica: %+v", gone[0], gone[1], e)
			}
		}
		return nil
	})
	replicaCat := p.catalog(p.replica)
	for id, rows := range map[string]struct {
		id   table.Identifier
		rows int
	}{"ns.y": {table.Identifier{"ns", "y"}, 3}, "ns.a.t": {table.Identifier{"ns", "a", "t"}, 6}} {
		ns, name := joinNS(rows.id), rows.id[len(rows.id)-1]
		waitVerified(t, p.replica, ns, name, versions[id], 10*time.Second)
		for _, c := range []struct {
			site string
			ids  []int64
		}{{"primary", scan(t, cat, rows.id)}, {"replica", scan(t, replicaCat, rows.id)}} {
			if len(c.ids) != rows.rows {
				t.Errorf("%s on the %s: %d rows, want %d", id, c.site, len(c.ids), rows.rows)
			}
		}
	}
	st := p.replica.Server().Scanner().Status(0, 0)
	for _, e := range st.Entries {
		if len(e.MissingFiles) > 0 {
			t.Errorf("replica reports missing files for %v.%s: %v", e.Namespace, e.Name, e.MissingFiles)
		}
	}
}

func joinNS(id table.Identifier) string { return strings.Join(id[:len(id)-1], ".") }
