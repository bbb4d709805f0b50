// Package catalog owns twinlake's Iceberg catalog: warehouses (versioned
// buckets flagged as warehouse), nested namespaces with properties, tables
// and views, commits checked against their requirements and applied with
// apache/iceberg-go's metadata builder, staged creates, multi-table
// transactions, and the catalog identity records (identity.go) that let a
// replica rebuild the catalog from the warehouse bucket alone.
//
// State: the catalog keeps its local state in the shared meta.Store under the
// key prefix "c/" (ident.go), so loading and listing never read the object
// store. It writes every metadata.json and identity record as an object into
// the warehouse bucket through the object layer, so they replicate like any
// object. A commit is one metadata-file PutObject, one identity-record
// PutObject and one synced meta batch, which is the atomic pointer swap.
//
// Concurrency: writers of one table or view are serialised by a striped lock
// and check requirements against the current metadata under it, so
// concurrent commits never lose an update: the loser gets ErrCommitFailed.
// Namespace changes exclude entry changes through an RWMutex, so a namespace
// cannot be dropped while a table is being created in it. The package knows
// nothing of HTTP; internal/catalog/rest translates.
package catalog

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
)

// Objects is the part of the object layer the catalog uses.
// *objects.Layer implements it.
type Objects interface {
	Bucket(ctx context.Context, name string) (objects.Bucket, error)
	ListBuckets(ctx context.Context) []objects.Bucket
	CreateWarehouseBucket(ctx context.Context, name string) error
	UpdateBucket(ctx context.Context, name string, fn func(b *objects.Bucket) error) error
	SetBucketEncryption(ctx context.Context, name, alg string) error
	PutObject(ctx context.Context, bucket, key string, body io.Reader, opts objects.PutOptions) (*objects.Version, error)
	HeadObject(ctx context.Context, bucket, key, versionID string) (*objects.Version, error)
	GetObject(ctx context.Context, bucket, key, versionID string, off, length int64) (*objects.Version, io.ReadCloser, error)
	ListObjects(ctx context.Context, bucket string, opts objects.ListOptions) (objects.ListResult, error)
	DeleteObject(ctx context.Context, bucket, key, versionID string) (objects.DeleteResult, error)
}

var _ Objects = (*objects.Layer)(nil)

// Config holds the catalog's optional settings.
type Config struct {
	Logger *slog.Logger
	// Now is the clock of updated_ms and metadata timestamps; default time.Now.
	Now func() time.Time
	// MaxMetadataBytes bounds a file the catalog reads: the metadata file
	// RegisterTable reads, a manifest list or manifest a purge reads.
	// Default 64 MiB.
	MaxMetadataBytes int64
	// IdempotencyLifetime is how long the answer of a mutation sent with an
	// Idempotency-Key is kept and replayed (idempotency.go). Default 30m.
	IdempotencyLifetime time.Duration
}

func (c *Config) ensureDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxMetadataBytes == 0 {
		c.MaxMetadataBytes = 64 << 20
	}
	if c.IdempotencyLifetime == 0 {
		c.IdempotencyLifetime = 30 * time.Minute
	}
}

// Validate reports every problem with the configuration at once.
func (c *Config) Validate() error {
	var errs []error
	if c.MaxMetadataBytes < 0 {
		errs = append(errs, errors.New("catalog: MaxMetadataBytes must be >= 0"))
	}
	if c.IdempotencyLifetime < 0 {
		errs = append(errs, errors.New("catalog: IdempotencyLifetime must be >= 0"))
	}
	return errors.Join(errs...)
}

// Catalog is the Iceberg catalog of one site. It is safe for concurrent use.
type Catalog struct {
	meta meta.Store
	obj  Objects
	cfg  Config
	log  *slog.Logger

	// structMu: namespace changes hold it exclusively, entry changes shared.
	structMu sync.RWMutex
	locks    [256]sync.Mutex // striped per warehouse/namespace/name
	seed     maphash.Seed
	// locMu serialises a table location check with the write that takes
	// the location; it is taken last, after structMu and the stripes.
	locMu sync.Mutex

	cache metadataCache

	// idemSweep is where the next sweep of expired idempotency answers
	// starts (idempotency.go).
	idemSweep sweepCursor
	// expiry is when each warehouse's next soft-deleted entry expires
	// (table_undrop.go).
	expiry expiryMemo
	// named holds the directories each table's metadata names
	// (table_purge.go).
	named metadataCache

	// beforeExpiryCommit, set by tests only, runs between an expiry's plan
	// and its commit (maintenance.go).
	beforeExpiryCommit func(attempt int)
}

// New builds the catalog over the site's meta store and object layer.
func New(m meta.Store, obj Objects, cfg Config) (*Catalog, error) {
	cfg.ensureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if m == nil || obj == nil {
		return nil, errors.New("catalog: a meta store and an object layer are required")
	}
	c := &Catalog{meta: m, obj: obj, cfg: cfg, log: cfg.Logger.With("component", "catalog"),
		seed: maphash.MakeSeed(), cache: newMetadataCache(4096),
		named: newMetadataCache(namedDirsMax)}
	if err := c.rebuildLocations(); err != nil {
		return nil, fmt.Errorf("catalog: rebuild the location index: %w", err)
	}
	return c, nil
}

func (c *Catalog) nowMS() int64 { return c.cfg.Now().UnixMilli() }

// lockSet locks the stripes of the given entry keys in a fixed order (so two
// multi-table transactions cannot deadlock) and returns the unlock.
func (c *Catalog) lockSet(keys ...[]byte) func() {
	idx := make([]int, 0, len(keys))
	seen := map[int]bool{}
	for _, k := range keys {
		i := int(maphash.Bytes(c.seed, k) % uint64(len(c.locks)))
		if !seen[i] {
			seen[i] = true
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)
	for _, i := range idx {
		c.locks[i].Lock()
	}
	return func() {
		for j := len(idx) - 1; j >= 0; j-- {
			c.locks[idx[j]].Unlock()
		}
	}
}

// newID returns a random 128-bit hex ID for metadata keys.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// putIdentity writes an identity record into the warehouse bucket.
func (c *Catalog) putIdentity(ctx context.Context, wh string, r Record) error {
	key, err := r.Key()
	if err != nil {
		return err
	}
	body, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = c.obj.PutObject(ctx, wh, key, bytes.NewReader(body), objects.PutOptions{
		Size: int64(len(body)), ContentType: "application/json",
	})
	if err != nil {
		return fmt.Errorf("catalog: write identity record %s/%s: %w", wh, key, err)
	}
	return nil
}

// putFile writes a metadata file at an s3:// location inside the warehouse.
func (c *Catalog) putFile(ctx context.Context, wh, location string, body []byte) error {
	key, err := keyInWarehouse(wh, location)
	if err != nil {
		return err
	}
	_, err = c.obj.PutObject(ctx, wh, key, bytes.NewReader(body), objects.PutOptions{
		Size: int64(len(body)), ContentType: "application/json",
	})
	if err != nil {
		return fmt.Errorf("catalog: write %s: %w", location, err)
	}
	return nil
}

// readFile reads a (bounded) file at an s3:// location inside the warehouse.
func (c *Catalog) readFile(ctx context.Context, wh, location string) ([]byte, error) {
	key, err := keyInWarehouse(wh, location)
	if err != nil {
		return nil, err
	}
	data, err := c.readObject(ctx, wh, key)
	switch {
	case errors.Is(err, objects.ErrObjectNotFound):
		return nil, fmt.Errorf("%w: %s does not exist", ErrInvalidRequest, location)
	case errors.Is(err, errTooLarge):
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalidRequest, location, c.cfg.MaxMetadataBytes)
	}
	return data, err
}

// readObject reads the latest version of an object whole; one larger than
// MaxMetadataBytes is errTooLarge.
func (c *Catalog) readObject(ctx context.Context, bucket, key string) ([]byte, error) {
	v, err := c.obj.HeadObject(ctx, bucket, key, "")
	if err != nil {
		return nil, err
	}
	if v.Size > c.cfg.MaxMetadataBytes {
		return nil, fmt.Errorf("%w: %s/%s", errTooLarge, bucket, key)
	}
	_, rc, err := c.obj.GetObject(ctx, bucket, key, v.VersionID, 0, v.Size)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// locationSchemes are the URL schemes engines use for S3 locations.
var locationSchemes = map[string]bool{"s3": true, "s3a": true, "s3n": true}

// keyInWarehouse returns the object key an s3://warehouse/key location names,
// refusing locations in another bucket (or with a user, port, query or
// fragment), under the reserved prefix, or whose path has '.', '..' or
// empty segments: engines and S3 clients resolve those differently, so the
// files would not be where the catalog checks and purges.
func keyInWarehouse(wh, location string) (string, error) {
	u, err := url.Parse(location)
	if err != nil || !locationSchemes[u.Scheme] || u.Opaque != "" {
		return "", fmt.Errorf("%w: %q is not an s3:// location", ErrInvalidLocation, location)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery || u.Host != wh {
		return "", fmt.Errorf("%w: %q is outside warehouse bucket %q", ErrInvalidLocation, location, wh)
	}
	key := strings.TrimPrefix(u.Path, "/")
	segs := strings.Split(strings.TrimSuffix(key, "/"), "/")
	if key == "" || segs[0]+"/" == ReservedPrefix {
		return "", fmt.Errorf("%w: %q is at the bucket root or under the reserved prefix %s", ErrInvalidLocation, location, ReservedPrefix)
	}
	for _, seg := range segs {
		if seg == "" || seg == "." || seg == ".." {
			return "", fmt.Errorf("%w: %q has an empty, '.' or '..' path segment", ErrInvalidLocation, location)
		}
	}
	if err := objects.ValidateKey(key); err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrInvalidLocation, location, err)
	}
	return key, nil
}

// defaultLocation is s3://<warehouse>/<ns1>/<ns2>/<name>, a view's default.
func defaultLocation(wh string, id Ident) string {
	return "s3://" + wh + "/" + strings.Join(append(append([]string{}, id.Namespace...), id.Name), "/")
}

// defaultTableLocation is s3://<warehouse>/<ns1>/<ns2>/<name>-<uuid without
// dashes>: the table's UUID keeps it apart from any other table's, such as
// one that had the name before a rename or a drop, or a table of a
// namespace named like the table.
func defaultTableLocation(wh string, id Ident, tableUUID uuid.UUID) string {
	return defaultLocation(wh, id) + "-" + strings.ReplaceAll(tableUUID.String(), "-", "")
}

// metadataFileLocation is <location>/metadata/<5-digit version>-<uuid>.metadata.json.
func metadataFileLocation(location string, version int64) string {
	return fmt.Sprintf("%s/metadata/%05d-%s.metadata.json", strings.TrimRight(location, "/"), version, newUUID())
}

// parseMetadataVersion returns the sequence number of a metadata file name
// (00003-<uuid>.metadata.json is 3), or 0 if the name has none.
func parseMetadataVersion(location string) int64 {
	base := location[strings.LastIndex(location, "/")+1:]
	num, _, ok := strings.Cut(base, "-")
	if !ok {
		return 0
	}
	var v int64
	for _, ch := range num {
		if ch < '0' || ch > '9' {
			return 0
		}
		v = v*10 + int64(ch-'0')
		if v > 1<<40 {
			return 0
		}
	}
	return v
}
