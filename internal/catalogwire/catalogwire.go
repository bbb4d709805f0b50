// Package catalogwire holds the wire types of the Iceberg REST catalog
// surface (/_iceberg/v1), as the Iceberg REST OpenAPI specification names
// them, shared by the server (internal/catalog/rest) and twinlake's own
// client (adminclient.CatalogClient). Iceberg's own JSON documents inside
// them (schemas, partition specs, sort orders, table and view metadata,
// commit requirements and updates) are carried as raw JSON: the server
// decodes them with apache/iceberg-go, the client passes them through, so
// the command line never links iceberg-go.
package catalogwire

import "encoding/json"

// Ident names a table or view: TableIdentifier.
type Ident struct {
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

// ErrorResponse is every error answer: IcebergErrorResponse.
type ErrorResponse struct {
	Error ErrorModel `json:"error"`
}

// ErrorModel is the error itself: Type is the Iceberg exception name
// (NoSuchTableException, ...), Code the HTTP status.
type ErrorModel struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
}

// ConfigResponse answers GET /v1/config: CatalogConfig.
type ConfigResponse struct {
	Defaults  map[string]string `json:"defaults"`
	Overrides map[string]string `json:"overrides"`
	Endpoints []string          `json:"endpoints"`
	// IdempotencyKeyLifetime is an ISO-8601 duration (PT30M).
	IdempotencyKeyLifetime string `json:"idempotency-key-lifetime,omitempty"`
}

// Namespace is a namespace with its properties: CreateNamespaceRequest,
// CreateNamespaceResponse and GetNamespaceResponse.
type Namespace struct {
	Namespace  []string          `json:"namespace"`
	Properties map[string]string `json:"properties"`
}

// ListNamespacesResponse is one page of namespaces.
type ListNamespacesResponse struct {
	Namespaces    [][]string `json:"namespaces"`
	NextPageToken string     `json:"next-page-token,omitempty"`
}

// UpdateProperties is UpdateNamespacePropertiesRequest.
type UpdateProperties struct {
	Removals []string          `json:"removals"`
	Updates  map[string]string `json:"updates"`
}

// UpdatePropertiesResult is UpdateNamespacePropertiesResponse.
type UpdatePropertiesResult struct {
	Updated []string `json:"updated"`
	Removed []string `json:"removed"`
	Missing []string `json:"missing,omitempty"`
}

// ListIdentifiersResponse is one page of tables or views.
type ListIdentifiersResponse struct {
	Identifiers   []Ident `json:"identifiers"`
	NextPageToken string  `json:"next-page-token,omitempty"`
}

// LoadResult answers a load, create, register or commit of a table or
// view: LoadTableResult and LoadViewResult.
type LoadResult struct {
	MetadataLocation string            `json:"metadata-location,omitempty"`
	Metadata         json.RawMessage   `json:"metadata"`
	Config           map[string]string `json:"config,omitempty"`
	// StorageCredentials are vended credentials, each for a location
	// prefix.
	StorageCredentials []StorageCredential `json:"storage-credentials,omitempty"`
}

// StorageCredential is a credential for the files under Prefix.
type StorageCredential struct {
	Prefix string            `json:"prefix"`
	Config map[string]string `json:"config"`
}

// CreateTable is CreateTableRequest.
type CreateTable struct {
	Name          string            `json:"name"`
	Location      string            `json:"location,omitempty"`
	Schema        json.RawMessage   `json:"schema"`
	PartitionSpec json.RawMessage   `json:"partition-spec,omitempty"`
	WriteOrder    json.RawMessage   `json:"write-order,omitempty"`
	StageCreate   bool              `json:"stage-create,omitempty"`
	Properties    map[string]string `json:"properties,omitempty"`
}

// CommitTable is CommitTableRequest; Requirements and Updates are JSON
// arrays of Iceberg's table requirements and updates.
type CommitTable struct {
	Identifier   *Ident          `json:"identifier,omitempty"`
	Requirements json.RawMessage `json:"requirements"`
	Updates      json.RawMessage `json:"updates"`
}

// RegisterTable is RegisterTableRequest.
type RegisterTable struct {
	Name             string `json:"name"`
	MetadataLocation string `json:"metadata-location"`
	Overwrite        bool   `json:"overwrite,omitempty"`
}

// Rename is RenameTableRequest, for tables and views.
type Rename struct {
	Source      *Ident `json:"source"`
	Destination *Ident `json:"destination"`
}

// CreateView is CreateViewRequest; Schema and ViewVersion are Iceberg JSON.
type CreateView struct {
	Name        string            `json:"name"`
	Location    string            `json:"location,omitempty"`
	Schema      json.RawMessage   `json:"schema"`
	ViewVersion json.RawMessage   `json:"view-version"`
	Properties  map[string]string `json:"properties"`
}
