package scanner

import (
	"context"
	"fmt"
	"strings"

	"github.com/twinlake/twinlake/internal/config"
)

// isWarehouse reports whether bucket is a warehouse here.
func (s *Scanner) isWarehouse(ctx context.Context, bucket string) bool {
	b, err := s.cfg.Objects.Bucket(ctx, bucket)
	return err == nil && b.Warehouse
}

// replicaSide reports whether this site acts as the replica for client
// writes: the role is on, or a catalog resync window is open.
func (s *Scanner) replicaSide() bool {
	return s.Role() || s.persisted().Window
}

// InboundGuard refuses inbound replication into a warehouse bucket unless
// this site is the replica (or a catalog resync window is open): a primary,
// including one promoted by failover, never takes warehouse writes from a
// peer.
func (s *Scanner) InboundGuard(ctx context.Context, bucket string) error {
	if !s.isWarehouse(ctx, bucket) || s.replicaSide() {
		return nil
	}
	return fmt.Errorf("%w: inbound replication to warehouse %s refused (tables replica_catalog=off)", ErrNotReplica, bucket)
}

// ClientWriteGuard refuses client writes to a warehouse bucket on the
// replica.
func (s *Scanner) ClientWriteGuard(ctx context.Context, bucket string) error {
	if s.isWarehouse(ctx, bucket) && s.replicaSide() {
		return fmt.Errorf("%w (warehouse %s)", ErrReplicaReadOnly, bucket)
	}
	return nil
}

// CatalogWriteGuard refuses catalog changes on the replica.
func (s *Scanner) CatalogWriteGuard(ctx context.Context, warehouse string) error {
	if s.replicaSide() {
		return fmt.Errorf("%w (warehouse %s): the catalog is rebuilt from the primary's replicated data", ErrReplicaReadOnly, warehouse)
	}
	return nil
}

// roleGuard is the settings guard of tables replica_catalog=on: refused
// when site replication joins more than two sites, or another site is
// already the replica (or cannot be asked).
func (s *Scanner) roleGuard(ctx context.Context, subsys string, proposed map[string]string) error {
	if subsys != config.SubsysTables {
		return nil
	}
	if proposed[config.TablesReplicaCatalog] != "on" || s.Role() {
		return nil
	}
	st := s.cfg.Replication.State()
	if n := len(st.Sites); n > 2 {
		return fmt.Errorf("%w: the site replication configuration holds %d sites; Tables replication supports a primary and one replica", ErrRoleConflict, n)
	}
	infos, unreachable := s.cfg.Replication.Peers(ctx)
	for _, p := range infos {
		if p.ReplicaCatalog {
			return fmt.Errorf("%w: site %s is already the replica; set replica_catalog=off there first", ErrRoleConflict, p.SiteName)
		}
	}
	if len(unreachable) > 0 {
		return fmt.Errorf("%w: cannot confirm that no other site is the replica: %s unreachable", ErrRoleConflict, strings.Join(unreachable, ", "))
	}
	return nil
}
