package cluster

import (
	"context"
	"errors"
	"fmt"

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
