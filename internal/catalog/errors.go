package catalog

import "errors"

// Sentinel errors. The REST edge (internal/catalog/rest) and the admin API
// map each to its wire error once; the comment names the Iceberg error type
// and HTTP status.
var (
	// ErrNoSuchWarehouse: the warehouse (a bucket flagged as warehouse) does
	// not exist (NoSuchWarehouseException, 404).
	ErrNoSuchWarehouse = errors.New("catalog: no such warehouse")
	// ErrWarehouseExists: CreateWarehouse on an existing warehouse without
	// IgnoreExisting (AlreadyExistsException, 409).
	ErrWarehouseExists = errors.New("catalog: warehouse already exists")
	// ErrBucketNotWarehouse: CreateWarehouse on an existing plain bucket
	// without UpgradeExisting (AlreadyExistsException, 409).
	ErrBucketNotWarehouse = errors.New("catalog: bucket exists and is not a warehouse")
	// ErrWarehouseNotEmpty: RemoveWarehouse while namespaces remain
	// (NamespaceNotEmptyException, 409).
	ErrWarehouseNotEmpty = errors.New("catalog: warehouse still holds namespaces")
	// ErrNoSuchNamespace: the namespace does not exist (NoSuchNamespaceException, 404).
	ErrNoSuchNamespace = errors.New("catalog: no such namespace")
	// ErrNamespaceExists: CreateNamespace on an existing namespace (AlreadyExistsException, 409).
	ErrNamespaceExists = errors.New("catalog: namespace already exists")
	// ErrNamespaceNotEmpty: DropNamespace on a namespace holding tables,
	// views or child namespaces (NamespaceNotEmptyException, 409).
	ErrNamespaceNotEmpty = errors.New("catalog: namespace is not empty")
	// ErrNoSuchTable: the table does not exist (NoSuchTableException, 404).
	ErrNoSuchTable = errors.New("catalog: no such table")
	// ErrTableExists: create, register or rename onto an existing table or
	// view name (AlreadyExistsException, 409).
	ErrTableExists = errors.New("catalog: table already exists")
	// ErrNoSuchView: the view does not exist (NoSuchViewException, 404).
	ErrNoSuchView = errors.New("catalog: no such view")
	// ErrViewExists: create or rename onto an existing view or table name
	// (AlreadyExistsException, 409).
	ErrViewExists = errors.New("catalog: view already exists")
	// ErrCommitFailed: a commit requirement does not hold against the current
	// metadata; reload and retry (CommitFailedException, 409).
	ErrCommitFailed = errors.New("catalog: commit failed")
	// ErrInvalidIdentifier: an empty, over-long or control-character name
	// (BadRequestException, 400).
	ErrInvalidIdentifier = errors.New("catalog: invalid identifier")
	// ErrInvalidLocation: a location outside the warehouse bucket or in its
	// reserved prefix (BadRequestException, 400).
	ErrInvalidLocation = errors.New("catalog: invalid location")
	// ErrLocationInUse: a create, stage-create, register or set-location
	// whose location equals, holds or lies inside a live table's location
	// (BadRequestException, 400: the request must name another location;
	// 409 would read as "table exists" or "retry the commit" to clients).
	ErrLocationInUse = errors.New("catalog: location overlaps another table's")
	// ErrInvalidRequest: any other malformed request, such as an update the
	// metadata builder rejects (BadRequestException, 400).
	ErrInvalidRequest = errors.New("catalog: invalid request")
	// ErrUnprocessable: a well-formed request whose parts contradict each
	// other, such as a namespace property both set and removed
	// (UnprocessableEntityException, 422).
	ErrUnprocessable = errors.New("catalog: unprocessable request")
	// ErrInvalidRecord: an identity record or key that does not parse.
	ErrInvalidRecord = errors.New("catalog: invalid identity record")
)

// errTooLarge: a file the catalog reads is larger than MaxMetadataBytes;
// RegisterTable answers it as ErrInvalidRequest.
var errTooLarge = errors.New("catalog: file too large")
