package servercmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/app"
	"github.com/twinlake/twinlake/internal/bench"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
	"github.com/twinlake/twinlake/internal/cluster"
)

// AddServerCommands attaches the server command.
func AddServerCommands(root *cobra.Command, opts *cmdutil.Options) {
	var cfg app.Config
	var logLevel, logFormat, accessLog, certsDir string
	var nodes, etcd []string
	var etcdSite string
	var leaseTTL time.Duration
	var inlineLimit, etcdQuota, minFree string
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a twinlake site",
		Long: `Run a twinlake site: the S3 API, the admin API and health endpoints on one port.

Root credentials come from TWINLAKE_ROOT_USER and TWINLAKE_ROOT_PASSWORD. If both are
unset at first start, a strong secret is generated, stored (mode 0600) in the data
directory and printed once.

Users' secrets are sealed under a key wrapped by the root password. To change the root
password, start once with the new one in TWINLAKE_ROOT_PASSWORD and the one the site last
ran with in TWINLAKE_ROOT_PASSWORD_PREVIOUS (an environment variable, not a flag, so that
it never shows in the process list): the site re-seals them. Without it (or with a wrong
one) the site refuses to start and changes nothing.`,
		Example: `  twinlake server --address 127.0.0.1:9000 --dir ./data
  twinlake server --dir ./data --log-format json --access-log /var/log/twinlake/access.log
  TWINLAKE_ROOT_USER=admin TWINLAKE_ROOT_PASSWORD=change-me-now twinlake server --dir ./data
  twinlake server --address n1:9000 --dir /srv/tl --cluster n1:9000,n2:9000,n3:9000,n4:9000
  TWINLAKE_ETCD_USER=twinlake TWINLAKE_ETCD_PASSWORD=... twinlake server --address n1:9000 --dir /srv/tl --cluster n1:9000,n2:9000 --etcd https://e1:2379,https://e2:2379,https://e3:2379
  TWINLAKE_ROOT_USER=admin TWINLAKE_ROOT_PASSWORD=new-password TWINLAKE_ROOT_PASSWORD_PREVIOUS=change-me-now twinlake server --dir ./data`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			log, err := newLogger(cmd.ErrOrStderr(), logFormat, logLevel)
			if err != nil {
				return err
			}
			cfg.Logger = log
			access, closeAccess, err := openAccessLog(accessLog, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			defer closeAccess()
			cfg.AccessLog = access
			cfg.Out = cmd.OutOrStdout()
			cfg.RootUser = os.Getenv("TWINLAKE_ROOT_USER")
			cfg.RootPassword = os.Getenv("TWINLAKE_ROOT_PASSWORD")
			if prev := os.Getenv("TWINLAKE_ROOT_PASSWORD_PREVIOUS"); prev != "" {
				cfg.PreviousRootPasswords = []string{prev}
			}
			cfg.KMSSecretKey = os.Getenv("TWINLAKE_KMS_SECRET_KEY")
			cfg.MetricsPublic = os.Getenv("TWINLAKE_METRICS_AUTH") == "public"
			cfg.MetricsToken = os.Getenv("TWINLAKE_METRICS_TOKEN")
			if certsDir != "" {
				tlsCfg, peer, err := loadCerts(certsDir)
				if err != nil {
					return err
				}
				cfg.TLS, cfg.PeerHTTPClient = tlsCfg, peer
			}
			if len(etcd) > 0 && len(nodes) == 0 {
				return fmt.Errorf("--etcd is for the nodes of a multi-node site: give --cluster too")
			}
			if etcdSite != "" && len(etcd) == 0 {
				return fmt.Errorf("--etcd-site names a site's records in an etcd run apart from it: give --etcd too")
			}
			if inlineLimit != "" {
				if len(nodes) == 0 {
					return fmt.Errorf("--cluster-inline-limit is for the nodes of a multi-node site: give --cluster too")
				}
				n, err := bench.ParseSize(inlineLimit)
				if err != nil {
					return fmt.Errorf("--cluster-inline-limit: %w", err)
				}
				cfg.InlineLimit = n // bounds checked with the rest of the node's settings
			}
			if minFree != "" {
				if len(nodes) > 0 {
					return fmt.Errorf("--min-free-space is for a single-node site: a multi-node site's metadata is in etcd (--etcd-quota)")
				}
				n, err := bench.ParseSize(minFree)
				if err != nil {
					return fmt.Errorf("--min-free-space: %w", err)
				}
				cfg.MinFreeSpace = n // bounds checked with the rest of the settings
			}
			var quota int64
			if etcdQuota != "" {
				if len(nodes) == 0 {
					return fmt.Errorf("--etcd-quota is for the nodes of a multi-node site: give --cluster too")
				}
				if quota, err = bench.ParseSize(etcdQuota); err != nil {
					return fmt.Errorf("--etcd-quota: %w", err)
				}
			}
			stopTuning, err := tuneGC(log)
			if err != nil {
				return err
			}
			defer stopTuning()
			if len(nodes) > 0 {
				secret := []byte(os.Getenv("TWINLAKE_NODE_SECRET"))
				if len(secret) == 0 {
					secret = app.DeriveNodeSecret(cfg.RootPassword)
				}
				nc := app.NodeConfig{Config: cfg, Nodes: nodes, NodeSecret: secret, LeaseTTL: leaseTTL, EtcdQuota: quota}
				if certsDir != "" {
					if nc.TLS, err = nodeTLS(certsDir, cfg.Dir, cfg.TLS.Certificates[0]); err != nil {
						return err
					}
				}
				if len(etcd) > 0 {
					if nc.Etcd, err = externalEtcd(etcd, certsDir); err != nil {
						return err
					}
					nc.Etcd.Site = etcdSite
				}
				return runNode(cmd.Context(), nc)
			}
			return runServer(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Address, "address", "127.0.0.1:9000", "listen address")
	f.StringVar(&cfg.Dir, "dir", "./data", "data directory")
	f.StringSliceVar(&nodes, "cluster", nil, "run as one node of a multi-node site of these 2 to 16 nodes (host:port, comma-separated, the same list on every node, --address among them; without --etcd each node also uses the next two ports for etcd)")
	f.StringSliceVar(&etcd, "etcd", nil, "with --cluster: keep the site's records in this etcd cluster (its client URLs, comma-separated, all http:// or all https://; its user and password from TWINLAKE_ETCD_USER and TWINLAKE_ETCD_PASSWORD; https trusts the system roots and --certs-dir CAs/*.crt) instead of running etcd on the nodes; sites sharing it need --etcd-site")
	f.StringVar(&etcdSite, "etcd-site", "", "with --etcd: keep the site's records under /twinlake/NAME/ (default \"site\"), so that several sites can share one etcd, each under its own name")
	f.StringVar(&inlineLimit, "cluster-inline-limit", "", "with --cluster: keep objects of at most this size (1KiB to 64KiB; default 1KiB) inside their version record in etcd instead of erasure-coding them across the nodes: small objects get faster, and etcd's quota holds fewer versions (see the operator's guide)")
	f.StringVar(&minFree, "min-free-space", "", "the free space to keep on the data directory's file system (128MiB to 64GiB; default 1GiB): below it the site refuses new object data with 507 XMinioStorageFull, so that it never fills the disk and stops, and deletes keep working")
	f.StringVar(&etcdQuota, "etcd-quota", "", "with --cluster and without --etcd: the size of each node's etcd database past which etcd refuses writes until space is freed (1GiB to 8GiB; default 2GiB): the site's metadata is there, so the quota bounds how many object versions a multi-node site holds (see the operator's guide); give every node the same")
	f.DurationVar(&leaseTTL, "cluster-lease", 0, "with --cluster: how long a dead leader holds the lead before another node takes over (2s to 60s; default 10s)")
	f.StringSliceVar(&cfg.Drives, "drives", nil, "erasure-code object data across these 2 to 16 directories, one per drive (comma-separated; --dir keeps the metadata; fixed when the site first starts; with --cluster: this node's drives, as many on every node, 16 in all at most)")
	f.StringVar(&cfg.SiteName, "site-name", "", "this site's name (default derived from its deployment ID)")
	f.StringVar(&cfg.Domain, "domain", "", "domain for virtual-host style requests (BUCKET.DOMAIN)")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	f.StringVar(&logFormat, "log-format", "text", "log format: text or json (one object a line, for log shippers)")
	f.StringVar(&accessLog, "access-log", "", "write an access log, one JSON line per request, to FILE (appended) or stdout")
	f.StringVar(&certsDir, "certs-dir", "", "serve HTTPS with DIR/public.crt and DIR/private.key; DIR/CAs/*.crt are trusted for peer sites (with --cluster: TLS between the nodes too, each node's certificate chaining to DIR/public.crt or DIR/CAs/*.crt)")
	root.AddCommand(cmd)
}

// loadCerts reads the site's certificate and key from dir, and builds the
// client peers are reached with: the system roots plus dir/CAs/*.crt.
func loadCerts(dir string) (*tls.Config, *http.Client, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "public.crt"), filepath.Join(dir, "private.key"))
	if err != nil {
		return nil, nil, fmt.Errorf("--certs-dir: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if _, err := addCerts(pool, caFiles(dir)); err != nil {
		return nil, nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	tr.MaxIdleConnsPerHost = 256
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, &http.Client{Transport: tr}, nil
}

// caFiles are the certificates dir/CAs/*.crt.
func caFiles(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "CAs", "*.crt"))
	return files
}

// addCerts adds the PEM certificates in files to pool and returns their
// text, one after the other.
func addCerts(pool *x509.CertPool, files []string) ([]byte, error) {
	var bundle []byte
	for _, p := range files {
		pem, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("--certs-dir: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--certs-dir: %s holds no PEM certificate", p)
		}
		bundle = append(append(bundle, pem...), '\n')
	}
	return bundle, nil
}

// nodeTLS is how a node reaches the other nodes of its site over TLS:
// it presents cert, its certificate (certsDir/public.crt, as loadCerts
// read it), and trusts that certificate and certsDir/CAs/*.crt, and
// nothing else. etcd reads the trusted certificates from one file,
// written to DIR/node-ca.pem.
func nodeTLS(certsDir, dir string, cert tls.Certificate) (*app.NodeTLS, error) {
	certFile, keyFile := filepath.Join(certsDir, "public.crt"), filepath.Join(certsDir, "private.key")
	pool := x509.NewCertPool()
	bundle, err := addCerts(pool, append([]string{certFile}, caFiles(certsDir)...))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	caFile := filepath.Join(dir, "node-ca.pem")
	if err := os.WriteFile(caFile, bundle, 0o600); err != nil {
		return nil, err
	}
	return &app.NodeTLS{
		Files:  cluster.TLSFiles{CertFile: certFile, KeyFile: keyFile, TrustedCAFile: caFile},
		Client: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}, nil
}

// externalEtcd is the etcd at endpoints, with the credentials in the
// environment, reached over TLS (for https://) trusting the system roots
// and certsDir/CAs/*.crt.
func externalEtcd(endpoints []string, certsDir string) (*app.ExternalEtcd, error) {
	e := &app.ExternalEtcd{Endpoints: endpoints,
		Username: os.Getenv("TWINLAKE_ETCD_USER"), Password: os.Getenv("TWINLAKE_ETCD_PASSWORD")}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if certsDir != "" {
		if _, err := addCerts(pool, caFiles(certsDir)); err != nil {
			return nil, err
		}
	}
	e.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return e, nil
}

// runNode runs one node of a multi-node site until ctx ends.
func runNode(ctx context.Context, nc app.NodeConfig) error {
	n, err := app.StartNode(nc)
	if err != nil {
		return err
	}
	fmt.Fprintf(nc.Out, "twinlake node %s of a site of %d nodes (its data in %s)\n", n.Addr(), len(nc.Nodes), nc.Dir)
	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return n.Close(shutdown)
}

// runServer runs a site until ctx is cancelled (SIGINT/SIGTERM), then shuts
// down gracefully.
func runServer(ctx context.Context, cfg app.Config) error {
	// Bind first: probes are answered (live 200, ready 503 with the
	// reason) while the stores open, however long a first start after an
	// upgrade takes.
	early, err := app.Listen(cfg)
	if err != nil {
		return err
	}
	cfg.Early = early
	srv, err := app.New(cfg)
	if err != nil {
		early.Close()
		return err
	}
	if err := srv.Start(); err != nil {
		srv.Close(context.Background())
		return err
	}
	fmt.Fprintf(cfg.Out, "twinlake serving on %s (data in %s)\n", srv.URL(), cfg.Dir)
	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return srv.Close(shutdown)
}
