package democmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/config"
)

// demoSite is one demo site as it is now, read from its admin API.
type demoSite struct {
	alias, url string
	replica    bool // tables replica_catalog=on
	promoting  bool // a failover is completing
}

// role names the site's Tables role for the banner.
func (d demoSite) role() string {
	switch {
	case d.promoting:
		return "Tables replica, being promoted"
	case d.replica:
		return "Tables replica"
	}
	return "Tables primary"
}

// readDemoSite reads a site's Tables role from its admin API: the banner
// states the roles as they are (after a failover, dr is no longer the
// replica), not as the first run made them.
func readDemoSite(ctx context.Context, c *adminclient.Client, alias, url string) (demoSite, error) {
	d := demoSite{alias: alias, url: url}
	cfg, err := c.GetConfig(ctx, config.SubsysTables)
	if err != nil {
		return d, fmt.Errorf("%s site: read tables settings: %w", alias, err)
	}
	for _, kv := range cfg.Keys {
		if kv.Key == config.TablesReplicaCatalog {
			d.replica = kv.Value == "on"
		}
	}
	if d.replica {
		st, err := c.TablesReplicationStatus(ctx, 0, 1)
		if err != nil {
			return d, fmt.Errorf("%s site: read table replicate status: %w", alias, err)
		}
		d.promoting = st.Promoting
	}
	return d, nil
}

// printDemoBanner writes what is running and what to try, for the sites as
// they are.
func printDemoBanner(out io.Writer, dir, user, password string, sites []demoSite) {
	fmt.Fprintf(out, "twinlake demo is running (data in %s).\n", dir)
	for _, s := range sites {
		fmt.Fprintf(out, "  %-8s %s   (alias %q, %s)\n", s.alias, s.url, s.alias, s.role())
	}
	fmt.Fprintf(out, "  credentials: %s / %s\n", user, password)
	// The browser console is served by every site under /twinlake/console/
	// (internal/console); sign in with the credentials above.
	for _, s := range sites {
		fmt.Fprintf(out, "  console:     %s/twinlake/console/   (%s)\n", s.url, s.alias)
	}
	fmt.Fprintln(out)
	var replicas []string
	for _, s := range sites {
		if s.replica {
			replicas = append(replicas, s.alias)
		}
	}
	writer := sites[0]
	switch len(replicas) {
	case 0:
		fmt.Fprintf(out, "The sites are joined by site replication; neither is a Tables replica (after\n"+
			"a failover both accept warehouse writes: tables replica_catalog=off on both).\n")
	default:
		fmt.Fprintf(out, "The sites are joined by site replication, and %s is the Tables replica\n"+
			"(tables replica_catalog=on).\n", strings.Join(replicas, ", "))
	}
	for _, s := range sites {
		if !s.replica {
			writer = s
			break
		}
	}
	w, r := writer.alias, otherAlias(sites, writer.alias)
	fmt.Fprintf(out, "Try:\n"+
		"  twinlake mb %[1]s/photos\n"+
		"  twinlake cp ./README.md %[1]s/photos/\n"+
		"  twinlake ls %[2]s/photos\n"+
		"  twinlake admin replicate status %[1]s\n"+
		"  twinlake table warehouse create %[1]s lake\n"+
		"  twinlake table namespace create %[1]s lake sales\n"+
		"  twinlake table create %[1]s lake sales orders --schema 'id:long,name:string'\n", w, r)
	for _, a := range replicas {
		fmt.Fprintf(out, "  twinlake table replicate status %[1]s\n"+
			"  twinlake table replicate failover %[1]s      # the DR runbook: docs/operator-guide.md\n"+
			"  twinlake admin trace -v --call tables-scan %[1]s\n", a)
	}
	fmt.Fprintf(out, "Iceberg engines: REST catalog %s/_iceberg, warehouse \"lake\", SigV4 (s3tables).\n\nPress Ctrl-C to stop.\n", writer.url)
}

// otherAlias returns the alias of a site other than alias.
func otherAlias(sites []demoSite, alias string) string {
	for _, s := range sites {
		if s.alias != alias {
			return s.alias
		}
	}
	return alias
}
