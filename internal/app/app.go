// Package app is twinlake's composition root: it builds every part of a site
// from Config, wires them together and owns their start and stop order.
// Nothing else in twinlake constructs a part's collaborators.
package app

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/twinlake/twinlake/internal/admin"
	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/blob/sse"
	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/catalog/rest"
	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/console"
	"github.com/twinlake/twinlake/internal/hlc"
	"github.com/twinlake/twinlake/internal/iam"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/metrics"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/replication"
	"github.com/twinlake/twinlake/internal/replication/peerhttp"
	"github.com/twinlake/twinlake/internal/s3api"
	"github.com/twinlake/twinlake/internal/s3api/sigv4"
	"github.com/twinlake/twinlake/internal/scanner"
	"github.com/twinlake/twinlake/internal/trace"
)

// Config is everything a site needs to start.
type Config struct {
	Address string // listen address, e.g. 127.0.0.1:9000 (port 0 picks one)
	Dir     string // data directory
	// Drives, when set (2 to 16 directories, each on its own drive),
	// hold the object data erasure-coded across them, one shard per drive
	// (drives.go); Dir keeps the metadata. Empty: object data lives in
	// Dir. The number of drives is fixed when the site first starts.
	Drives []string
	// Meta and Blobs, when set, are the site's metadata and object data
	// stores, opened by the caller (a node of a multi-node site: the
	// metadata in etcd, the data on a drive set across the nodes); Dir
	// then keeps only the node's own files. Close does not close them.
	Meta  meta.Store
	Blobs *blob.Store
	// InlineLimit, with Meta set, is the largest object kept inside its
	// version record in Meta instead of coded across the drives:
	// MinInlineLimit to MaxInlineLimit, 0 for DefaultInlineLimit.
	InlineLimit int64
	// MinFreeSpace is the reserve of free space a site without Meta keeps
	// on the file system of Dir (room.go): MinMinFreeSpace to
	// MaxMinFreeSpace, 0 for DefaultMinFreeSpace.
	MinFreeSpace int64
	// Nodes, when set, reports a multi-node site's nodes for admin info.
	Nodes func(ctx context.Context) []adminclient.NodeInfo
	// NodeAddrs are a multi-node site's nodes (host:port), which its
	// peers may call when the address they joined it with does not
	// answer.
	NodeAddrs []string
	// Etcd, when set, reports a multi-node site's etcd storage for admin
	// info and the metrics.
	Etcd func(ctx context.Context) *adminclient.EtcdInfo
	// Trace, when set, is the bus the site publishes its trace events on
	// (a node's, named for the node); otherwise one named SiteName.
	Trace *trace.Bus
	// RemoteTrace, when set, streams the trace events of a multi-node
	// site's other nodes into admin trace.
	RemoteTrace func(ctx context.Context, f trace.Filter) <-chan trace.Event

	SiteName string
	// RootUser and RootPassword come from TWINLAKE_ROOT_USER/PASSWORD; when
	// both are empty a generated credential is stored in Dir.
	RootUser, RootPassword string
	// PreviousRootPasswords are root passwords the site may have last run
	// with (TWINLAKE_ROOT_PASSWORD_PREVIOUS): after a root password change,
	// the one that opens the IAM data key lets the site re-seal its users'
	// secrets under the new one. Not needed once the site has started with
	// the new password; never stored or logged.
	PreviousRootPasswords []string
	// KMSSecretKey is TWINLAKE_KMS_SECRET_KEY; empty means a generated key
	// stored in Dir. When set, it also wraps the IAM data key, so a root
	// password change needs no previous password.
	KMSSecretKey string
	// Domain enables virtual-host style S3 requests.
	Domain string
	// TLS, when set, serves HTTPS with these certificates.
	TLS *tls.Config
	// Early, from Listen, is the listener bound before New opened the
	// stores, answering probes meanwhile; Start serves on it. Nil: Start
	// binds Address itself.
	Early *Early
	// MetricsPublic serves /twinlake/metrics without authentication.
	MetricsPublic bool
	// MetricsToken, if set, is accepted as a bearer token for metrics.
	MetricsToken string
	Logger       *slog.Logger
	// AccessLog, when set, receives one JSON line per HTTP request
	// (accesslog.go); writes to it are serialised.
	AccessLog io.Writer
	// Out receives the one-time notice of generated credentials.
	Out io.Writer
	// Clock, when set, replaces the wall clock of the site's hybrid logical
	// clock and of IAM's expiry checks (tests skew it).
	Clock func() time.Time
	// PeerHTTPClient, when set, carries replication traffic to peers.
	PeerHTTPClient *http.Client
	// PeerDial and PeerServer, when set, replace the peer API client and
	// server: tests run a site speaking another peer protocol version.
	PeerDial   replication.Dialer
	PeerServer func(peerhttp.Config) (http.Handler, error)
}

// Validate reports every problem with the configuration at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Dir == "" {
		errs = append(errs, errors.New("a data directory (--dir) is required"))
	}
	if c.Address == "" {
		errs = append(errs, errors.New("a listen address (--address) is required"))
	}
	if err := validDrives(c.Drives); err != nil {
		errs = append(errs, err)
	}
	if err := validInlineLimit(c.InlineLimit); err != nil {
		errs = append(errs, fmt.Errorf("--cluster-inline-limit: %w", err))
	}
	if err := validMinFreeSpace(c.MinFreeSpace); err != nil {
		errs = append(errs, fmt.Errorf("--min-free-space: %w", err))
	}
	return errors.Join(errs...)
}

// Server is one running site.
type Server struct {
	cfg        Config
	log        *slog.Logger
	meta       meta.Store
	ownMeta    bool // opened here, so closed here
	objects    *objects.Layer
	iam        *iam.Store
	trace      *trace.Bus
	settings   *config.Store
	metrics    *metrics.Registry
	verifier   *sigv4.Verifier
	repl       *replication.Engine
	scanner    *scanner.Scanner
	catalog    *catalog.Catalog
	stopExpiry func() // stops the catalog's soft-delete expiry (tables.go)
	// stopLifecycle stops the bucket lifecycle runs (lifecycle.go).
	stopLifecycle func()
	console       *console.Console
	maint         *maintenanceMetrics
	deploymentID  string
	started       time.Time
	// replacedDrives are drives found empty at startup on a site that
	// already held data: Start heals them in the background.
	replacedDrives []int
	downDrives     []int // drives unreachable at startup
	blobs          *blob.Store
	stopDriveHeal  func()

	ln   net.Listener
	http *http.Server
	done chan error
}

// New opens the site's stores and builds its parts; it does not listen yet.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, started: time.Now()}
	if err := s.build(); err != nil {
		s.closeStores()
		return nil, err
	}
	return s, nil
}

// The largest object a multi-node site keeps inside its version record
// (Config.InlineLimit). Its metadata store is etcd, which holds its whole
// keyspace, and an hour of each key's old revisions, in one file of a few
// GiB: every byte kept inline there is a byte fewer for versions. By
// default the data of all but the tiniest objects (folder markers,
// version hints, catalog identity records) is erasure-coded across the
// nodes' drives; a site of many small objects and few versions can keep
// more inline, which spares each of them a shard write on every node.
// The upper bound keeps a group of inline writes within what an etcd run
// apart from the site takes in one request (1.5 MiB by default).
const (
	DefaultInlineLimit = 1 << 10
	MinInlineLimit     = 1 << 10
	MaxInlineLimit     = 64 << 10
)

// validInlineLimit checks a multi-node site's inline limit (0: the
// default).
func validInlineLimit(n int64) error {
	if n != 0 && (n < MinInlineLimit || n > MaxInlineLimit) {
		return fmt.Errorf("inline limit %d bytes outside [%d, %d] (1KiB to 64KiB)", n, MinInlineLimit, MaxInlineLimit)
	}
	return nil
}

// inlineLimit is the object layer's inline limit: the layer's default
// (128 KiB) when the metadata is this node's own Pebble, the site's
// InlineLimit when it is a multi-node site's etcd.
func (s *Server) inlineLimit() int64 {
	if s.cfg.Meta == nil {
		return 0
	}
	if s.cfg.InlineLimit != 0 {
		return s.cfg.InlineLimit
	}
	return DefaultInlineLimit
}

func (s *Server) build() error {
	cfg := s.cfg
	root, created, err := iam.LoadOrCreateRoot(cfg.Dir, cfg.RootUser, cfg.RootPassword)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(cfg.Out, "Generated root credentials (shown once; stored in %s, mode 0600):\n  access key: %s\n  secret key: %s\n",
			filepath.Join(cfg.Dir, iam.RootFile), root.AccessKey, root.SecretKey)
	}
	if cfg.Meta != nil {
		s.meta = cfg.Meta
	} else {
		if s.meta, err = meta.OpenPebble(filepath.Join(cfg.Dir, "meta"), s.log.With("component", "pebble")); err != nil {
			return err
		}
		s.ownMeta = true
	}
	var fresh bool // the site starts for the first time
	// The number of drives is recorded with the deployment ID, in one
	// commit: a first start cut short after it (a node that lost the
	// lead midway) must not leave a site that looks older than drive sets.
	first := map[string]string{driveCountKey: strconv.Itoa(s.driveCount())}
	if s.deploymentID, fresh, err = loadOrCreateID(s.meta, "sys/deployment-id", first); err != nil {
		return err
	}
	icfg := iam.Config{Clock: hlc.New(cfg.Clock), Now: cfg.Clock, SiteID: s.deploymentID, Logger: s.log,
		PreviousRootSecrets: cfg.PreviousRootPasswords}
	if stored, ok := iam.StoredRoot(cfg.Dir); ok && stored.SecretKey != root.SecretKey {
		icfg.StoredRootSecret = stored.SecretKey // replaced by one from the environment
	}
	if cfg.KMSSecretKey != "" {
		if icfg.KMSKey, err = parseKMSKey(cfg.KMSSecretKey); err != nil {
			return err
		}
	}
	if s.iam, err = iam.Open(s.meta, root, icfg); err != nil {
		return err
	}
	if cfg.SiteName == "" {
		s.cfg.SiteName = "site-" + s.deploymentID[:8]
	}
	if s.trace = cfg.Trace; s.trace == nil {
		s.trace = trace.New(s.cfg.SiteName)
	}
	blobs, replaced, err := s.openBlobs(fresh)
	if err != nil {
		return err
	}
	ring, err := s.keyring()
	if err != nil {
		return err
	}
	s.verifier = &sigv4.Verifier{Creds: s.iam, Domain: cfg.Domain}
	s.metrics = metrics.New()
	if s.settings, err = config.New(s.meta, config.Config{Logger: s.log}); err != nil {
		return err
	}
	s.objects, err = objects.New(s.meta, blobs, objects.Config{
		SiteID: s.deploymentID, Cipher: sseCipher{ring}, Logger: s.log, Clock: hlc.New(cfg.Clock),
		InlineLimit: s.inlineLimit(), Room: s.room(),
	})
	if err != nil {
		return err
	}
	s.replacedDrives, s.blobs = replaced, blobs
	dial := cfg.PeerDial
	if dial == nil {
		dial = peerhttp.Dialer(cfg.PeerHTTPClient)
	}
	s.repl, err = replication.New(replication.Config{
		Meta: s.meta, Objects: s.objects, Settings: s.settings, Trace: s.trace,
		Dial: dial, SiteID: s.deploymentID, SiteName: s.cfg.SiteName,
		Logger: s.log, Registerer: s.metrics.Registerer(),
		OnService: func(ak, sk string) { s.iam.SetService(iam.Credential{AccessKey: ak, SecretKey: sk}) },
		Secrets:   s.iam,
		ReplicaCatalog: func() bool {
			return s.settings.Bool(config.SubsysTables, config.TablesReplicaCatalog)
		},
	})
	if err != nil {
		return err
	}
	s.objects.SetReplicator(s.repl)
	s.repl.AttachIAM(s.iam)
	if err := s.buildCatalog(); err != nil {
		return err
	}
	s.scanner, err = scanner.New(scanner.Config{
		Meta: s.meta, Objects: s.objects, Catalog: s.catalog, Settings: s.settings, Trace: s.trace,
		Replication: s.repl, SiteID: s.deploymentID, Logger: s.log, Registerer: s.metrics.Registerer(),
	})
	return err
}

func (s *Server) keyring() (*sse.Keyring, error) {
	var master []byte
	var err error
	if s.cfg.KMSSecretKey != "" {
		master, err = parseKMSKey(s.cfg.KMSSecretKey)
	} else {
		master, err = iam.LoadOrCreateKey(s.cfg.Dir, "kms.key", 32)
	}
	if err != nil {
		return nil, err
	}
	return sse.NewKeyring(master)
}

// loadOrCreateID returns the ID stored under key, creating it once;
// created reports that it did. The records in first are written in the
// same commit as a new ID.
func loadOrCreateID(m meta.Store, key string, first map[string]string) (id string, created bool, err error) {
	v, err := m.Get([]byte(key))
	if err == nil {
		return string(v), false, nil
	}
	if !errors.Is(err, meta.ErrNotFound) {
		return "", false, err
	}
	var b [16]byte
	rand.Read(b[:])
	id = hex.EncodeToString(b[:])
	batch := m.NewBatch()
	batch.Set([]byte(key), []byte(id))
	for k, v := range first {
		batch.Set([]byte(k), []byte(v))
	}
	return id, true, batch.Commit(true)
}

// StartHandler starts the site's background work and returns its HTTP
// handler without listening: for a node of a multi-node site, whose own
// server routes the site's requests to it while it leads.
func (s *Server) StartHandler() (http.Handler, error) {
	handler, err := s.handler()
	if err != nil {
		return nil, err
	}
	if err := s.startWork(); err != nil {
		return nil, err
	}
	s.log.Info("serving as the site's leader", "site", s.cfg.SiteName, "deployment", s.deploymentID)
	return handler, nil
}

// startWork starts replication, the scanner and the periodic jobs.
func (s *Server) startWork() error {
	if err := s.repl.Start(); err != nil {
		return err
	}
	s.scanner.Start()
	s.startExpiry()
	if err := s.startLifecycle(); err != nil {
		return err
	}
	s.startDriveHeal()
	return nil
}

// Start listens and serves in the background.
func (s *Server) Start() error {
	handler, err := s.handler()
	if err != nil {
		return err
	}
	var ln net.Listener
	if s.cfg.Early != nil {
		// The listener was bound before the stores opened; take it over.
		if ln, err = s.cfg.Early.handOver(); err != nil {
			ln.Close()
			return err
		}
	} else {
		if ln, err = net.Listen("tcp", s.cfg.Address); err != nil {
			return err
		}
		if s.cfg.TLS != nil {
			ln = tls.NewListener(ln, s.cfg.TLS)
		}
	}
	if err := s.startWork(); err != nil {
		ln.Close()
		return err
	}
	s.ln = ln
	s.http = &http.Server{Handler: handler, ReadHeaderTimeout: s.settings.Duration(config.SubsysAPI, config.APIReadHeaderTimeout),
		IdleTimeout: 2 * time.Minute, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	s.done = make(chan error, 1)
	go func() { s.done <- s.http.Serve(ln) }()
	s.log.Info("serving", "url", s.URL(), "site", s.cfg.SiteName, "deployment", s.deploymentID)
	return nil
}

func (s *Server) handler() (http.Handler, error) {
	s3m, err := metrics.NewS3(s.metrics.Registerer())
	if err != nil {
		return nil, err
	}
	if s.maint, err = newMaintenanceMetrics(s.metrics.Registerer()); err != nil {
		return nil, err
	}
	if err := s.metrics.Registerer().Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: metrics.TraceDroppedEventsTotal, Help: "Trace events dropped because a subscriber fell behind.",
	}, func() float64 { return float64(s.trace.Dropped()) })); err != nil {
		return nil, err
	}
	if err := metrics.RegisterDisk(s.metrics.Registerer(), s.cfg.Dir, s.diskReserve()); err != nil {
		return nil, err
	}
	if err := s.metrics.Registerer().Register(newNodeCollector(s)); err != nil {
		return nil, err
	}
	s3, err := s3api.New(s3api.Config{
		Objects:    s.objects,
		Verifier:   s.verifier,
		Trace:      s.trace,
		Metrics:    s3m,
		Logger:     s.log,
		Domain:     s.cfg.Domain,
		WriteGuard: s.scanner.ClientWriteGuard,
		Denied:     s.iam.IsService,
		Authorizer: s.iam,
		STS:        stsIssuer{s.iam},
	})
	if err != nil {
		return nil, err
	}
	s.followBodyTimeouts(s3)
	auth := sigv4Auth{v: s.verifier, iam: s.iam}
	adm, err := admin.New(admin.Config{Auth: auth, Settings: s.settings, Trace: s.trace, Info: s, Logger: s.log, Replication: s.repl,
		Tables: tablesAdmin{c: s.catalog, sc: s.scanner, tr: s.trace, mm: s.maint}, TablesReplication: s.scanner, Identities: s.iam,
		Heal: healer{s}, Quotas: quotas{s}, RemoteTrace: s.cfg.RemoteTrace})
	if err != nil {
		return nil, err
	}
	newPeer := s.cfg.PeerServer
	if newPeer == nil {
		newPeer = func(c peerhttp.Config) (http.Handler, error) { return peerhttp.NewServer(c) }
	}
	peer, err := newPeer(peerhttp.Config{Engine: s.repl, Auth: peerAuth{auth}, Trace: s.trace, Logger: s.log,
		InboundGuard: s.scanner.InboundGuard, CatalogExport: s.scanner.ExportJSON, Nodes: s.cfg.NodeAddrs})
	if err != nil {
		return nil, err
	}
	cat, err := s.catalogHandler()
	if err != nil {
		return nil, err
	}
	met, err := s.metrics.Handler(metrics.Auth{Public: s.cfg.MetricsPublic, BearerToken: s.cfg.MetricsToken, Authenticator: metricsAuth{auth}})
	if err != nil {
		return nil, err
	}
	limited, err := s.limitS3(s3)
	if err != nil {
		return nil, err
	}
	con, err := s.newConsole(auth)
	if err != nil {
		return nil, err
	}
	s.console = con
	h := s.withAccessLog(&router{s3: limited, routes: []prefixRoute{
		{"/twinlake/health/", http.HandlerFunc(s.health)},
		{"/twinlake/admin/v1/", adm},
		{peerhttp.Prefix, peer},
		{"/twinlake/metrics", met},
		{rest.PathPrefix, cat},
		{"/twinlake/console", con},
	}})
	con.SetBackend(h)
	return h, nil
}

// prefixRoute mounts a surface under a path prefix.
type prefixRoute struct {
	prefix  string
	handler http.Handler
}

// router dispatches by path prefix without cleaning the path: S3 keys may
// hold "//" or "..", which http.ServeMux would redirect away.
type router struct {
	routes []prefixRoute
	s3     http.Handler
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for _, p := range rt.routes {
		if strings.HasPrefix(r.URL.Path, p.prefix) {
			p.handler.ServeHTTP(w, r)
			return
		}
	}
	rt.s3.ServeHTTP(w, r)
}

// health answers the unauthenticated liveness and readiness probes.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/twinlake/health/live", "/twinlake/health/ready":
		w.WriteHeader(http.StatusOK)
	default:
		http.NotFound(w, r)
	}
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns the base URL clients reach the server at: https:// when it
// serves TLS.
func (s *Server) URL() string {
	if s.cfg.TLS != nil {
		return "https://" + s.Addr()
	}
	return "http://" + s.Addr()
}

// Credentials returns the root credential.
func (s *Server) Credentials() iam.Credential { return s.iam.Root() }

// Close stops accepting requests, waits for those in flight (until ctx
// ends), then closes the stores.
func (s *Server) Close(ctx context.Context) error {
	var err error
	if s.http != nil {
		err = s.http.Shutdown(ctx)
		<-s.done
	}
	if s.stopLifecycle != nil {
		s.stopLifecycle()
	}
	if s.stopDriveHeal != nil {
		s.stopDriveHeal()
	}
	if s.stopExpiry != nil {
		s.stopExpiry()
	}
	if s.console != nil {
		s.console.Close()
	}
	if s.scanner != nil {
		s.scanner.Close()
	}
	if s.repl != nil {
		s.repl.Close()
	}
	return errors.Join(err, s.closeStores())
}

func (s *Server) closeStores() error {
	if s.meta != nil && s.ownMeta {
		return s.meta.Close()
	}
	return nil
}

// Replication returns the site's replication engine.
func (s *Server) Replication() *replication.Engine { return s.repl }

// Settings returns the site's runtime settings.
func (s *Server) Settings() *config.Store { return s.settings }

// Scanner returns the site's Tables replica scanner.
func (s *Server) Scanner() *scanner.Scanner { return s.scanner }

// Objects returns the site's object layer.
func (s *Server) Objects() *objects.Layer { return s.objects }

// IAM returns the site's identity store.
func (s *Server) IAM() *iam.Store { return s.iam }
