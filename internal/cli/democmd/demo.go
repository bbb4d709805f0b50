package democmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/app"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/config"
)

// demoSites are the two sites of twinlake demo, in join order.
var demoSites = []struct{ alias, sub string }{{"primary", "primary"}, {"dr", "dr"}}

// AddDemoCommand attaches the demo command.
func AddDemoCommand(root *cobra.Command, opts *cmdutil.Options) {
	var dir, logLevel string
	var ports []int
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a primary and a disaster-recovery site on loopback, joined by site replication",
		Long: `Run two twinlake sites in one process on 127.0.0.1: "primary" and "dr", each
with its own data directory under --dir, joined by site replication. The aliases
"primary" and "dr" are written to the client configuration, so every twinlake
command works against them at once. Credentials come from TWINLAKE_ROOT_USER and
TWINLAKE_ROOT_PASSWORD, or are generated once and kept (mode 0600) in --dir.
Run it again on the same --dir to resume.`,
		Example: `  twinlake demo
  twinlake demo --dir /tmp/demo --ports 9100,9101`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(ports) != 2 {
				return errors.New("--ports takes two ports: primary,dr")
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level: %w", err)
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
			return runDemo(cmd.Context(), cmd.OutOrStdout(), opts, dir, ports, log)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "dir", "./demo", "directory holding both sites' data")
	f.IntSliceVar(&ports, "ports", []int{9000, 9001}, "loopback ports of the primary and the DR site")
	f.StringVar(&logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	root.AddCommand(cmd)
}

// demoCredentials returns the root credential both demo sites use.
func demoCredentials(dir string) (user, password string, err error) {
	if u, p := os.Getenv("TWINLAKE_ROOT_USER"), os.Getenv("TWINLAKE_ROOT_PASSWORD"); u != "" || p != "" {
		return u, p, nil
	}
	path := filepath.Join(dir, "demo-credentials")
	if data, err := os.ReadFile(path); err == nil {
		u, p, ok := strings.Cut(strings.TrimSpace(string(data)), ":")
		if !ok {
			return "", "", fmt.Errorf("%s: want USER:PASSWORD", path)
		}
		return u, p, nil
	}
	b := make([]byte, 20)
	rand.Read(b)
	user, password = "demo-admin", hex.EncodeToString(b)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	return user, password, os.WriteFile(path, []byte(user+":"+password+"\n"), 0o600)
}

func runDemo(ctx context.Context, out io.Writer, opts *cmdutil.Options, dir string, ports []int, log *slog.Logger) error {
	user, password, err := demoCredentials(dir)
	if err != nil {
		return err
	}
	var servers []*app.Server
	defer func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, s := range servers {
			s.Close(shutdown)
		}
	}()
	cfg, err := opts.LoadConfig()
	if err != nil {
		return err
	}
	var specs []adminclient.ReplicationSite
	for i, site := range demoSites {
		srv, err := app.New(app.Config{
			Address: fmt.Sprintf("127.0.0.1:%d", ports[i]), Dir: filepath.Join(dir, site.sub), SiteName: site.alias,
			RootUser: user, RootPassword: password, Logger: log.With("site", site.alias),
		})
		if err != nil {
			return fmt.Errorf("%s site: %w", site.alias, err)
		}
		if err := srv.Start(); err != nil {
			srv.Close(context.Background())
			return fmt.Errorf("%s site: %w", site.alias, err)
		}
		servers = append(servers, srv)
		url := srv.URL()
		cfg.Aliases[site.alias] = cmdutil.Alias{URL: url, AccessKey: user, SecretKey: password}
		specs = append(specs, adminclient.ReplicationSite{Name: site.alias, Endpoint: url, AccessKey: user, SecretKey: password})
	}
	if err := opts.SaveConfig(cfg); err != nil {
		return err
	}
	// Wire the sites as an operator would, through the admin API.
	primary, err := opts.AdminClient(demoSites[0].alias)
	if err != nil {
		return err
	}
	dr, err := opts.AdminClient(demoSites[1].alias)
	if err != nil {
		return err
	}
	info, err := primary.ReplicateInfo(ctx)
	if err != nil {
		return fmt.Errorf("primary site: %w", err)
	}
	if !info.Enabled {
		// The spec's order: make the DR site the Tables replica first, so
		// warehouse data is accepted from the start.
		if _, err := dr.SetConfig(ctx, config.SubsysTables, map[string]string{config.TablesReplicaCatalog: "on"}); err != nil {
			return fmt.Errorf("make dr the Tables replica: %w", err)
		}
		jctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := primary.ReplicateAdd(jctx, specs)
		cancel()
		if err != nil {
			return fmt.Errorf("join the sites: %w", err)
		}
	}
	var live []demoSite
	for i, c := range []*adminclient.Client{primary, dr} {
		d, err := readDemoSite(ctx, c, demoSites[i].alias, specs[i].Endpoint)
		if err != nil {
			return err
		}
		live = append(live, d)
	}
	printDemoBanner(out, dir, user, password, live)
	<-ctx.Done()
	return nil
}
