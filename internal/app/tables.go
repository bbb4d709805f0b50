package app

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/twinlake/twinlake/internal/admin"
	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/catalog/rest"
	"github.com/twinlake/twinlake/internal/iam"
	"github.com/twinlake/twinlake/internal/iam/policy"
	"github.com/twinlake/twinlake/internal/s3api/sigv4"
	"github.com/twinlake/twinlake/internal/scanner"
	"github.com/twinlake/twinlake/internal/trace"
)

// buildCatalog builds the Iceberg catalog over the meta store and objects.
func (s *Server) buildCatalog() error {
	var err error
	s.catalog, err = catalog.New(s.meta, s.objects, catalog.Config{Logger: s.log})
	return err
}

// catalogHandler builds the Iceberg REST surface mounted at rest.PathPrefix.
func (s *Server) catalogHandler() (http.Handler, error) {
	return rest.New(rest.Config{
		Catalog: s.catalog, Auth: tablesAuth{v: s.verifier, denied: s.iam.IsService, iam: s.iam}, Trace: s.trace,
		Registerer: s.metrics.Registerer(), Logger: s.log, WriteGuard: s.scanner.CatalogWriteGuard,
	})
}

// tablesAuth authenticates Iceberg REST calls: SigV4 with service s3tables;
// the site-replication service credential is refused.
type tablesAuth struct {
	v      *sigv4.Verifier
	denied func(accessKey string) bool
	iam    *iam.Store
}

// Authorize implements rest.Authorizer over IAM.
func (a tablesAuth) Authorize(accessKey string, bucket *policy.Policy, r *policy.Request) bool {
	return a.iam.Authorize(accessKey, bucket, r)
}

var _ rest.Authorizer = tablesAuth{}

// VendCredentials implements rest.CredentialVendor over STS.
func (a tablesAuth) VendCredentials(accessKey string, d time.Duration, scope []byte) (rest.VendedCredential, error) {
	c, err := a.iam.VendCredentials(accessKey, d, scope)
	if err != nil {
		return rest.VendedCredential{}, err
	}
	return rest.VendedCredential{AccessKey: c.AccessKey, SecretKey: c.SecretKey, SessionToken: c.SessionToken,
		Expiration: c.Expiration}, nil
}

var _ rest.CredentialVendor = tablesAuth{}

func (a tablesAuth) Authenticate(r *http.Request) (string, error) {
	res, err := a.v.Verify(r, rest.SigningService)
	if err != nil {
		return "", fmt.Errorf("%w: %w", rest.ErrForbidden, err)
	}
	if res.Anonymous {
		return "", rest.ErrUnauthenticated
	}
	if a.denied != nil && a.denied(res.AccessKey) {
		return "", fmt.Errorf("%w: %s may not use the catalog", rest.ErrForbidden, res.AccessKey)
	}
	r.Body = res.Body(r)
	return res.AccessKey, nil
}

// tablesAdmin implements admin.TablesAdmin over the catalog; the replica
// refuses warehouse changes.
type tablesAdmin struct {
	c  *catalog.Catalog
	sc *scanner.Scanner
	tr *trace.Bus
	mm *maintenanceMetrics
}

func wireWarehouse(w catalog.Warehouse) adminclient.Warehouse {
	return adminclient.Warehouse{Name: w.Name, Created: w.Created, Encryption: w.Encryption}
}

func (t tablesAdmin) CreateWarehouse(ctx context.Context, name string, req adminclient.WarehouseCreateRequest) (adminclient.Warehouse, error) {
	if err := t.sc.CatalogWriteGuard(ctx, name); err != nil {
		return adminclient.Warehouse{}, fmt.Errorf("%w: %w", catalog.ErrInvalidRequest, err)
	}
	w, changed, err := t.c.CreateWarehouse(ctx, name, catalog.CreateWarehouseOptions{
		IgnoreExisting: req.IgnoreExisting, UpgradeExisting: req.UpgradeExisting,
	})
	out := wireWarehouse(w)
	out.Changed = changed
	return out, err
}

func (t tablesAdmin) ListWarehouses(ctx context.Context) ([]adminclient.Warehouse, error) {
	var out []adminclient.Warehouse
	for _, w := range t.c.ListWarehouses(ctx) {
		out = append(out, wireWarehouse(w))
	}
	return out, nil
}

func (t tablesAdmin) Warehouse(ctx context.Context, name string) (adminclient.Warehouse, error) {
	w, err := t.c.Warehouse(ctx, name)
	if err != nil {
		return wireWarehouse(w), err
	}
	out := wireWarehouse(w)
	set, err := t.c.WarehouseSettings(ctx, name)
	out.SoftDelete = catalog.FormatRetention(set.SoftDelete)
	out.Maintenance = set.Maintenance.String()
	return out, err
}

func (t tablesAdmin) RemoveWarehouse(ctx context.Context, name string) error {
	if err := t.sc.CatalogWriteGuard(ctx, name); err != nil {
		return fmt.Errorf("%w: %w", catalog.ErrInvalidRequest, err)
	}
	return t.c.RemoveWarehouse(ctx, name)
}

func (t tablesAdmin) SetWarehouseEncryption(ctx context.Context, name, alg string) (adminclient.Warehouse, error) {
	if err := t.sc.CatalogWriteGuard(ctx, name); err != nil {
		return adminclient.Warehouse{}, fmt.Errorf("%w: %w", catalog.ErrInvalidRequest, err)
	}
	w, err := t.c.SetWarehouseEncryption(ctx, name, alg)
	return wireWarehouse(w), err
}

// expiryInterval is how often the site looks for soft-deleted tables and
// views whose retention ended; a scan of an empty key range when there are
// none.
const expiryInterval = 2 * time.Second

// startExpiry runs the catalog's soft-delete expiry in the background on
// the warehouses this site may change (not a replica's: the primary's
// expiry replicates to it), until stopExpiry.
func (s *Server) startExpiry() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		s.catalog.RunExpiry(ctx, expiryInterval, func(ctx context.Context, wh string) bool {
			return s.scanner.CatalogWriteGuard(ctx, wh) == nil
		})
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		s.runMaintenance(ctx) // table maintenance (tables_maintenance.go)
	}()
	s.stopExpiry = func() { cancel(); <-done; <-done }
}

var _ admin.TablesSoftDelete = tablesAdmin{}

func (t tablesAdmin) SetWarehouseSettings(ctx context.Context, name string, settings map[string]string) (adminclient.Warehouse, error) {
	if err := t.sc.CatalogWriteGuard(ctx, name); err != nil {
		return adminclient.Warehouse{}, fmt.Errorf("%w: %w", catalog.ErrInvalidRequest, err)
	}
	if _, err := t.c.SetWarehouseSettings(ctx, name, settings); err != nil {
		return adminclient.Warehouse{}, err
	}
	return t.Warehouse(ctx, name)
}

func (t tablesAdmin) ListDeleted(ctx context.Context, wh, kind string, ns []string) ([]adminclient.DeletedEntry, error) {
	es, err := t.c.ListDeleted(ctx, wh, kind, ns)
	out := make([]adminclient.DeletedEntry, len(es))
	for i, e := range es {
		out[i] = adminclient.DeletedEntry{Kind: e.Kind, Namespace: e.Ident.Namespace, Name: e.Ident.Name, UUID: e.UUID,
			Location: e.Location, MetadataLocation: e.MetadataLocation, Dropped: e.Dropped, Expires: e.Expires}
	}
	return out, err
}

func (t tablesAdmin) Undrop(ctx context.Context, wh string, req adminclient.UndropRequest) (adminclient.UndropResult, error) {
	if err := t.sc.CatalogWriteGuard(ctx, wh); err != nil {
		return adminclient.UndropResult{}, fmt.Errorf("%w: %w", catalog.ErrInvalidRequest, err)
	}
	le, err := t.c.Undrop(ctx, wh, req.Kind, catalog.Ident{Namespace: req.Namespace, Name: req.Name},
		catalog.UndropOptions{As: req.As, UUID: req.UUID})
	if err != nil {
		return adminclient.UndropResult{}, err
	}
	return adminclient.UndropResult{Kind: le.Kind, Namespace: le.Ident.Namespace, Name: le.Ident.Name, UUID: le.UUID,
		MetadataLocation: le.MetadataLocation}, nil
}
