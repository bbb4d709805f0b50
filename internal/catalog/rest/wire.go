package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"

	"github.com/twinlake/twinlake/internal/catalog"
)

// Wire types of the Iceberg REST API, as the OpenAPI spec names them.

type identifier struct {
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

func (id *identifier) ident() (catalog.Ident, error) {
	if id == nil {
		return catalog.Ident{}, fmt.Errorf("%w: identifier is required", errBadRequest)
	}
	return catalog.Ident{Namespace: id.Namespace, Name: id.Name}, nil
}

func toIdentifier(id catalog.Ident) identifier {
	return identifier{Namespace: id.Namespace, Name: id.Name}
}

type configResponse struct {
	Defaults  map[string]string `json:"defaults"`
	Overrides map[string]string `json:"overrides"`
	Endpoints []string          `json:"endpoints"`
	// IdempotencyKeyLifetime (ISO-8601 duration) advertises Idempotency-Key support.
	IdempotencyKeyLifetime string `json:"idempotency-key-lifetime,omitempty"`
}

type namespaceBody struct {
	Namespace  []string          `json:"namespace"`
	Properties map[string]string `json:"properties"`
}

type listNamespacesResponse struct {
	Namespaces    [][]string `json:"namespaces"`
	NextPageToken string     `json:"next-page-token,omitempty"`
}

type updatePropertiesRequest struct {
	Removals []string          `json:"removals"`
	Updates  map[string]string `json:"updates"`
}

type updatePropertiesResponse struct {
	Updated []string `json:"updated"`
	Removed []string `json:"removed"`
	Missing []string `json:"missing,omitempty"`
}

type listIdentifiersResponse struct {
	Identifiers   []identifier `json:"identifiers"`
	NextPageToken string       `json:"next-page-token,omitempty"`
}

type createTableRequest struct {
	Name          string                        `json:"name"`
	Location      string                        `json:"location"`
	Schema        *iceberg.Schema               `json:"schema"`
	PartitionSpec *iceberg.UnboundPartitionSpec `json:"partition-spec"`
	WriteOrder    *table.UnboundSortOrder       `json:"write-order"`
	StageCreate   bool                          `json:"stage-create"`
	Properties    map[string]string             `json:"properties"`
}

// loadResponse answers load, create, register and commit of tables and
// views (LoadTableResult, CommitTableResponse, LoadViewResult).
type loadResponse struct {
	MetadataLocation string            `json:"metadata-location,omitempty"`
	Metadata         json.RawMessage   `json:"metadata"`
	Config           map[string]string `json:"config,omitempty"`
	// StorageCredentials carries vended credentials (vending.go).
	StorageCredentials []storageCredential `json:"storage-credentials,omitempty"`
}

type commitTableRequest struct {
	Identifier   *identifier        `json:"identifier"`
	Requirements table.Requirements `json:"requirements"`
	Updates      table.Updates      `json:"updates"`
}

type commitTransactionRequest struct {
	TableChanges []commitTableRequest `json:"table-changes"`
}

type renameRequest struct {
	Source      *identifier `json:"source"`
	Destination *identifier `json:"destination"`
}

type registerTableRequest struct {
	Name             string `json:"name"`
	MetadataLocation string `json:"metadata-location"`
	Overwrite        bool   `json:"overwrite"`
}

type createViewRequest struct {
	Name        string            `json:"name"`
	Location    string            `json:"location"`
	Schema      *iceberg.Schema   `json:"schema"`
	ViewVersion *view.Version     `json:"view-version"`
	Properties  map[string]string `json:"properties"`
}

type commitViewRequest struct {
	Identifier   *identifier       `json:"identifier"`
	Requirements view.Requirements `json:"requirements"`
	Updates      view.Updates      `json:"updates"`
}

// namespaceParam decodes a {namespace} path parameter: levels joined by the
// unit separator (sent as %1F).
func namespaceParam(c *call) []string {
	return strings.Split(c.params["namespace"], "\x1f")
}

func tableIdent(c *call, nameParam string) catalog.Ident {
	return catalog.Ident{Namespace: namespaceParam(c), Name: c.params[nameParam]}
}

// page reads pageToken and pageSize.
func page(r *http.Request) (catalog.Page, error) {
	q := r.URL.Query()
	p := catalog.Page{Token: q.Get("pageToken")}
	if v := q.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return p, fmt.Errorf("%w: pageSize %q: want a positive integer", errBadRequest, v)
		}
		p.Size = n
	}
	return p, nil
}

func identifiers(ids []catalog.Ident) []identifier {
	out := make([]identifier, len(ids))
	for i, id := range ids {
		out[i] = toIdentifier(id)
	}
	return out
}
