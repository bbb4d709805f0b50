package rest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/catalogwire"
)

// Wire types of the Iceberg REST API: the shared ones live in catalogwire
// (twinlake's client uses them too); the requests that carry Iceberg
// documents are decoded here straight into iceberg-go's types, and
// TestWireAgreesWithCatalogwire keeps the two spellings equal.

type (
	identifier               = catalogwire.Ident
	configResponse           = catalogwire.ConfigResponse
	namespaceBody            = catalogwire.Namespace
	listNamespacesResponse   = catalogwire.ListNamespacesResponse
	updatePropertiesRequest  = catalogwire.UpdateProperties
	updatePropertiesResponse = catalogwire.UpdatePropertiesResult
	listIdentifiersResponse  = catalogwire.ListIdentifiersResponse
	loadResponse             = catalogwire.LoadResult
	storageCredential        = catalogwire.StorageCredential
	renameRequest            = catalogwire.Rename
	registerTableRequest     = catalogwire.RegisterTable
)

// identOf reads a body's identifier, which the request requires.
func identOf(id *identifier) (catalog.Ident, error) {
	if id == nil {
		return catalog.Ident{}, fmt.Errorf("%w: identifier is required", errBadRequest)
	}
	return catalog.Ident{Namespace: id.Namespace, Name: id.Name}, nil
}

func toIdentifier(id catalog.Ident) identifier {
	return identifier{Namespace: id.Namespace, Name: id.Name}
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

type commitTableRequest struct {
	Identifier   *identifier        `json:"identifier"`
	Requirements table.Requirements `json:"requirements"`
	Updates      table.Updates      `json:"updates"`
}

type commitTransactionRequest struct {
	TableChanges []commitTableRequest `json:"table-changes"`
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
