package adminclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/twinlake/twinlake/internal/catalogwire"
)

// CatalogSigningService is the SigV4 service name of the Iceberg REST API.
const CatalogSigningService = "s3tables"

// CatalogPathPrefix is where the Iceberg REST API is mounted.
const CatalogPathPrefix = "/_iceberg/v1"

// CatalogError is an error answered by the Iceberg REST API in its error
// model: Type is the Iceberg exception name (NoSuchTableException, ...).
type CatalogError struct {
	Type       string `json:"type"`
	Message    string `json:"message"`
	StatusCode int    `json:"code"`
}

func (e *CatalogError) Error() string {
	return fmt.Sprintf("%s (%s, HTTP %d)", e.Message, e.Type, e.StatusCode)
}

// The catalog's wire types are the server's own (catalogwire), named here
// as the client's API has always named them.
type (
	// CatalogIdent names a table or view.
	CatalogIdent = catalogwire.Ident
	// CatalogNamespace is a namespace and its properties.
	CatalogNamespace = catalogwire.Namespace
	// CatalogPropertiesSummary reports what a namespace update changed.
	CatalogPropertiesSummary = catalogwire.UpdatePropertiesResult
	// CatalogLoadResult is a loaded (or created, or committed) table or
	// view: its current metadata file and metadata JSON.
	CatalogLoadResult = catalogwire.LoadResult
	// CatalogCreateTable is a create-table request; Schema, PartitionSpec
	// and WriteOrder are Iceberg JSON.
	CatalogCreateTable = catalogwire.CreateTable
	// CatalogCreateView is a create-view request; Schema and ViewVersion
	// are Iceberg JSON.
	CatalogCreateView = catalogwire.CreateView
)

// CatalogClient calls one warehouse of a server's Iceberg REST API, signed
// with SigV4 for service s3tables. It is safe for concurrent use.
type CatalogClient struct {
	base      string // http(s)://host[:port]
	warehouse string
	creds     aws.Credentials
	cfg       Config
	signer    *v4.Signer
}

// NewCatalog returns a client for warehouse at the server at endpoint.
func NewCatalog(endpoint, warehouse string, creds Credentials, cfg Config) (*CatalogClient, error) {
	u, awsCreds, cfg, err := prepare(endpoint, creds, cfg)
	if err != nil {
		return nil, err
	}
	return &CatalogClient{base: u.Scheme + "://" + u.Host, warehouse: warehouse,
		creds: awsCreds, cfg: cfg, signer: v4.NewSigner()}, nil
}

// nsPath encodes namespace levels as one path segment (levels joined by %1F).
func nsPath(ns []string) string {
	esc := make([]string, len(ns))
	for i, l := range ns {
		esc[i] = url.PathEscape(l)
	}
	return strings.Join(esc, "%1F")
}

// path builds an escaped API path under the warehouse prefix.
func (c *CatalogClient) path(parts ...string) string {
	return CatalogPathPrefix + "/" + url.PathEscape(c.warehouse) + "/" + strings.Join(parts, "/")
}

// call signs and sends one request; a 2xx answer is decoded into out (if
// not nil), anything else returned as a *CatalogError.
func (c *CatalogClient) call(ctx context.Context, method, path string, query url.Values, in, out any) error {
	resp, err := c.send(ctx, method, path, query, nil, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return decodeCatalogError(resp)
	}
	if out != nil && resp.StatusCode != http.StatusNoContent {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("catalog %s %s: decode answer: %w", method, path, err)
		}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}

// send signs and sends one request with extra headers; the caller closes
// the answer's body.
func (c *CatalogClient) send(ctx context.Context, method, path string, query url.Values, hdr http.Header, in any) (*http.Response, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return nil, fmt.Errorf("catalog client: encode request: %w", err)
		}
	}
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	// A site that asks to be retried (503 with Retry-After: a multi-node
	// site between leaders) is, as the admin client does.
	for try := 0; ; try++ {
		resp, err := c.sendOnce(ctx, method, target, path, hdr, body)
		if err != nil || try == unavailableRetries || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			return resp, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (c *CatalogClient) sendOnce(ctx context.Context, method, target, path string, hdr http.Header, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", ContentTypeJSON)
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := c.signer.SignHTTP(ctx, c.creds, req, hash, CatalogSigningService, c.cfg.Region, time.Now().UTC()); err != nil {
		return nil, fmt.Errorf("catalog client: sign request: %w", err)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("catalog %s %s: %w", method, path, &UnreachableError{URL: c.base, Err: err})
	}
	return resp, nil
}

func decodeCatalogError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var body catalogwire.ErrorResponse
	if json.Unmarshal(data, &body) == nil && body.Error.Type != "" {
		return &CatalogError{Type: body.Error.Type, Message: body.Error.Message, StatusCode: resp.StatusCode}
	}
	msg, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &CatalogError{Type: "HTTPError", Message: msg, StatusCode: resp.StatusCode}
}

// Config returns the catalog configuration an engine receives for the
// warehouse (defaults, overrides).
func (c *CatalogClient) Config(ctx context.Context) (map[string]map[string]string, error) {
	var out catalogwire.ConfigResponse
	err := c.call(ctx, http.MethodGet, CatalogPathPrefix+"/config", url.Values{"warehouse": {c.warehouse}}, nil, &out)
	return map[string]map[string]string{"defaults": out.Defaults, "overrides": out.Overrides}, err
}

// CreateNamespace creates a namespace with properties.
func (c *CatalogClient) CreateNamespace(ctx context.Context, ns []string, props map[string]string) (CatalogNamespace, error) {
	var out CatalogNamespace
	err := c.call(ctx, http.MethodPost, c.path("namespaces"), nil, CatalogNamespace{Namespace: ns, Properties: props}, &out)
	return out, err
}

// ListNamespaces lists the children of parent (top level when empty),
// following every page.
func (c *CatalogClient) ListNamespaces(ctx context.Context, parent []string) ([][]string, error) {
	var all [][]string
	q := url.Values{}
	if len(parent) > 0 {
		q.Set("parent", strings.Join(parent, "\x1f"))
	}
	for {
		var out catalogwire.ListNamespacesResponse
		if err := c.call(ctx, http.MethodGet, c.path("namespaces"), q, nil, &out); err != nil {
			return nil, err
		}
		all = append(all, out.Namespaces...)
		if out.NextPageToken == "" {
			return all, nil
		}
		q.Set("pageToken", out.NextPageToken)
	}
}

// LoadNamespace returns a namespace and its properties.
func (c *CatalogClient) LoadNamespace(ctx context.Context, ns []string) (CatalogNamespace, error) {
	var out CatalogNamespace
	err := c.call(ctx, http.MethodGet, c.path("namespaces", nsPath(ns)), nil, nil, &out)
	return out, err
}

// UpdateNamespace removes and sets namespace properties.
func (c *CatalogClient) UpdateNamespace(ctx context.Context, ns []string, removals []string, updates map[string]string) (CatalogPropertiesSummary, error) {
	var out CatalogPropertiesSummary
	in := catalogwire.UpdateProperties{Removals: removals, Updates: updates}
	err := c.call(ctx, http.MethodPost, c.path("namespaces", nsPath(ns), "properties"), nil, in, &out)
	return out, err
}

// DropNamespace drops an empty namespace.
func (c *CatalogClient) DropNamespace(ctx context.Context, ns []string) error {
	return c.call(ctx, http.MethodDelete, c.path("namespaces", nsPath(ns)), nil, nil, nil)
}

// ListTables lists a namespace's tables; pageSize > 0 asks for pages of that
// size (every page is followed).
func (c *CatalogClient) ListTables(ctx context.Context, ns []string, pageSize int) ([]CatalogIdent, error) {
	return c.listIdents(ctx, c.path("namespaces", nsPath(ns), "tables"), pageSize)
}

// ListViews lists a namespace's views.
func (c *CatalogClient) ListViews(ctx context.Context, ns []string) ([]CatalogIdent, error) {
	return c.listIdents(ctx, c.path("namespaces", nsPath(ns), "views"), 0)
}

func (c *CatalogClient) listIdents(ctx context.Context, path string, pageSize int) ([]CatalogIdent, error) {
	all := []CatalogIdent{}
	q := url.Values{}
	if pageSize > 0 {
		q.Set("pageSize", strconv.Itoa(pageSize))
	}
	for {
		var out catalogwire.ListIdentifiersResponse
		if err := c.call(ctx, http.MethodGet, path, q, nil, &out); err != nil {
			return nil, err
		}
		all = append(all, out.Identifiers...)
		if out.NextPageToken == "" {
			return all, nil
		}
		q.Set("pageToken", out.NextPageToken)
	}
}

// CreateTable creates a table in ns.
func (c *CatalogClient) CreateTable(ctx context.Context, ns []string, req CatalogCreateTable) (CatalogLoadResult, error) {
	var out CatalogLoadResult
	err := c.call(ctx, http.MethodPost, c.path("namespaces", nsPath(ns), "tables"), nil, req, &out)
	return out, err
}

// LoadTable loads a table's current metadata.
func (c *CatalogClient) LoadTable(ctx context.Context, id CatalogIdent) (CatalogLoadResult, error) {
	var out CatalogLoadResult
	err := c.call(ctx, http.MethodGet, c.path("namespaces", nsPath(id.Namespace), "tables", url.PathEscape(id.Name)), nil, nil, &out)
	return out, err
}

// CommitTable commits requirements and updates (Iceberg JSON arrays) to a
// table and returns its new metadata.
func (c *CatalogClient) CommitTable(ctx context.Context, id CatalogIdent, requirements, updates json.RawMessage) (CatalogLoadResult, error) {
	var out CatalogLoadResult
	in := catalogwire.CommitTable{Identifier: &id, Requirements: requirements, Updates: updates}
	err := c.call(ctx, http.MethodPost, c.path("namespaces", nsPath(id.Namespace), "tables", url.PathEscape(id.Name)), nil, in, &out)
	return out, err
}

// RenameTable renames a table.
func (c *CatalogClient) RenameTable(ctx context.Context, from, to CatalogIdent) error {
	return c.call(ctx, http.MethodPost, c.path("tables", "rename"), nil,
		catalogwire.Rename{Source: &from, Destination: &to}, nil)
}

// DropTable drops a table; purge also deletes its files.
func (c *CatalogClient) DropTable(ctx context.Context, id CatalogIdent, purge bool) error {
	q := url.Values{"purgeRequested": {strconv.FormatBool(purge)}}
	return c.call(ctx, http.MethodDelete, c.path("namespaces", nsPath(id.Namespace), "tables", url.PathEscape(id.Name)), q, nil, nil)
}

// CreateView creates a view in ns.
func (c *CatalogClient) CreateView(ctx context.Context, ns []string, req CatalogCreateView) (CatalogLoadResult, error) {
	var out CatalogLoadResult
	err := c.call(ctx, http.MethodPost, c.path("namespaces", nsPath(ns), "views"), nil, req, &out)
	return out, err
}

// LoadView loads a view's current metadata.
func (c *CatalogClient) LoadView(ctx context.Context, id CatalogIdent) (CatalogLoadResult, error) {
	var out CatalogLoadResult
	err := c.call(ctx, http.MethodGet, c.path("namespaces", nsPath(id.Namespace), "views", url.PathEscape(id.Name)), nil, nil, &out)
	return out, err
}

// DropView drops a view.
func (c *CatalogClient) DropView(ctx context.Context, id CatalogIdent) error {
	return c.call(ctx, http.MethodDelete, c.path("namespaces", nsPath(id.Namespace), "views", url.PathEscape(id.Name)), nil, nil, nil)
}
