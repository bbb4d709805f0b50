package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// RootUser is the etcd user a site's nodes authenticate as.
const RootUser = "root"

// EnableAuth turns on etcd's authentication, with RootUser holding
// password, unless it is on already: from then on every etcd request
// needs the credentials, so that reaching an etcd port is not enough to
// read or change the site's records. c must be opened with RootUser and
// password (clientv3 treats them as unused until authentication is on).
// Every node may call it; the calls after the first change nothing.
func EnableAuth(ctx context.Context, c *clientv3.Client, password string) error {
	if password == "" {
		return errors.New("cluster: an empty etcd password")
	}
	st, err := c.AuthStatus(ctx)
	if err != nil {
		return fmt.Errorf("cluster: etcd auth status: %w", err)
	}
	if st.Enabled {
		return nil
	}
	if _, err := c.UserAdd(ctx, RootUser, password); err != nil && !errors.Is(err, rpctypes.ErrUserAlreadyExist) {
		return fmt.Errorf("cluster: add etcd user %s: %w", RootUser, err)
	}
	if _, err := c.UserGrantRole(ctx, RootUser, "root"); err != nil {
		return fmt.Errorf("cluster: grant etcd role root: %w", err)
	}
	if _, err := c.AuthEnable(ctx); err != nil {
		return fmt.Errorf("cluster: enable etcd authentication: %w", err)
	}
	return nil
}

// EnableAuthAt connects to the etcd at endpoints as RootUser with password
// (over tlsCfg when set) and turns authentication on, as EnableAuth does.
// A node calls it before its session starts: turned on under a session,
// authentication would cut that session's keep-alives short, its client
// holding no token yet.
func EnableAuthAt(ctx context.Context, endpoints []string, password string, tlsCfg *tls.Config, log *slog.Logger) error {
	c, err := newClient(ctx, clientv3.Config{Endpoints: endpoints, DialTimeout: 10 * time.Second,
		Username: RootUser, Password: password, TLS: tlsCfg}, log, new(atomic.Bool))
	if err != nil {
		return err
	}
	defer c.Close()
	return EnableAuth(ctx, c, password)
}

// A client's connection to an endpoint that has been silent for
// keepAliveTime is pinged, and closed if the ping has no answer within
// keepAliveTimeout (gRPC pings no more often than every 10 s, and etcd
// takes pings every 5 s). A member whose process is paused, or whose
// machine is cut off, keeps its connections open without answering:
// without the ping, every call the client sends it (one in three with
// three voters) waits for its deadline and a lease kept alive through it
// expires; the connection, once closed, is only used again when the
// member answers a new one's handshake.
const (
	keepAliveTime    = 10 * time.Second
	keepAliveTimeout = 3 * time.Second
)

// newClient connects to etcd as cfg says (its Logger and Context are set
// here), logging etcd's client errors to log.
func newClient(ctx context.Context, cfg clientv3.Config, log *slog.Logger, closing *atomic.Bool) (*clientv3.Client, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.Context, cfg.Logger = ctx, newZapLogger(log.With("component", "etcd-client"), closing)
	cfg.DialKeepAliveTime, cfg.DialKeepAliveTimeout = keepAliveTime, keepAliveTimeout
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster: connect to etcd: %w", err)
	}
	return c, nil
}
