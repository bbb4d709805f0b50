package console

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

	"github.com/twinlake/twinlake/internal/adminclient"
)

// WarehousesView answers GET /api/warehouses.
type WarehousesView struct {
	Warehouses []adminclient.Warehouse `json:"warehouses"`
	// Error says why the list is not known (the user may not list
	// warehouses: the page then lets them type one).
	Error string `json:"error,omitempty"`
}

// IdentsView answers the namespace and table lists: one page.
type IdentsView struct {
	Namespaces [][]string                 `json:"namespaces,omitempty"`
	Tables     []adminclient.CatalogIdent `json:"tables,omitempty"`
	Views      []adminclient.CatalogIdent `json:"views,omitempty"`
	Next       string                     `json:"next,omitempty"`
}

// SnapshotView is one snapshot on a table's timeline.
type SnapshotView struct {
	// IDs are strings: JavaScript numbers cannot hold every int64.
	ID        int64             `json:"id,string"`
	ParentID  int64             `json:"parentId,omitempty,string"`
	Time      time.Time         `json:"time"`
	Operation string            `json:"operation"`
	Rows      string            `json:"rows"`       // total-records
	Files     string            `json:"files"`      // total-data-files
	Added     string            `json:"addedRows"`  // added-records
	AddedF    string            `json:"addedFiles"` // added-data-files
	Summary   map[string]string `json:"summary"`
}

// TableView answers GET /api/warehouses/{warehouse}/table: what the Tables
// page shows of one table or view.
type TableView struct {
	Kind             string            `json:"kind"` // table or view
	MetadataLocation string            `json:"metadataLocation"`
	FormatVersion    int               `json:"formatVersion"`
	Location         string            `json:"location"`
	Schema           json.RawMessage   `json:"schema"`
	PartitionSpec    json.RawMessage   `json:"partitionSpec"`
	Properties       map[string]string `json:"properties"`
	CurrentSnapshot  int64             `json:"currentSnapshot,omitempty,string"`
	Snapshots        []SnapshotView    `json:"snapshots"`
	// SQL is a view's current version's representations.
	SQL []ViewSQL `json:"sql,omitempty"`
}

// ViewSQL is one SQL representation of a view.
type ViewSQL struct {
	Dialect string `json:"dialect"`
	SQL     string `json:"sql"`
}

func (c *Console) warehouses(w http.ResponseWriter, r *http.Request, cl *call) error {
	whs, err := cl.cl.admin.ListWarehouses(cl.ctx)
	v := WarehousesView{Warehouses: whs}
	if err != nil {
		body, _ := classify(err)
		v.Warehouses, v.Error = []adminclient.Warehouse{}, body.Message
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// namespaceParam reads a dotted namespace ("a.b"); levels may not be empty.
func namespaceParam(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	ns := strings.Split(v, ".")
	for _, l := range ns {
		if l == "" {
			return nil, fmt.Errorf("%w: namespace %q", errBadRequest, v)
		}
	}
	return ns, nil
}

func warehouseParam(r *http.Request) (string, error) {
	wh := r.PathValue("warehouse")
	return wh, validBucket(wh)
}

func (c *Console) namespaces(w http.ResponseWriter, r *http.Request, cl *call) error {
	wh, err := warehouseParam(r)
	if err != nil {
		return err
	}
	parent, err := namespaceParam(r.URL.Query().Get("parent"))
	if err != nil {
		return err
	}
	q := url.Values{}
	if len(parent) > 0 {
		q.Set("parent", strings.Join(parent, "\x1f"))
	}
	v := IdentsView{Namespaces: [][]string{}}
	var out struct {
		Namespaces [][]string `json:"namespaces"`
		Next       string     `json:"next-page-token"`
	}
	if err := c.catalogGet(cl, wh, "namespaces", pageQuery(r, q), &out); err != nil {
		return err
	}
	v.Namespaces = append(v.Namespaces, out.Namespaces...)
	v.Next = out.Next
	writeJSON(w, http.StatusOK, v)
	return nil
}

// pageQuery adds the page token and size of r to q: the catalog is asked
// for one page, never for every table.
func pageQuery(r *http.Request, q url.Values) url.Values {
	if t := r.URL.Query().Get("token"); t != "" {
		q.Set("pageToken", t)
	}
	_, limit, err := page(r, 200)
	if err != nil {
		limit = 200
	}
	q.Set("pageSize", strconv.Itoa(limit))
	return q
}

func (c *Console) tables(w http.ResponseWriter, r *http.Request, cl *call) error {
	wh, err := warehouseParam(r)
	if err != nil {
		return err
	}
	ns, err := namespaceParam(r.URL.Query().Get("namespace"))
	if err != nil || len(ns) == 0 {
		return fmt.Errorf("%w: a namespace is required", errBadRequest)
	}
	var out struct {
		Identifiers []adminclient.CatalogIdent `json:"identifiers"`
		Next        string                     `json:"next-page-token"`
	}
	if err := c.catalogGet(cl, wh, "namespaces/"+nsSegment(ns)+"/tables", pageQuery(r, url.Values{}), &out); err != nil {
		return err
	}
	v := IdentsView{Tables: out.Identifiers, Views: []adminclient.CatalogIdent{}, Next: out.Next}
	if v.Tables == nil {
		v.Tables = []adminclient.CatalogIdent{}
	}
	if r.URL.Query().Get("token") == "" {
		var views struct {
			Identifiers []adminclient.CatalogIdent `json:"identifiers"`
		}
		if err := c.catalogGet(cl, wh, "namespaces/"+nsSegment(ns)+"/views", url.Values{"pageSize": {"1000"}}, &views); err == nil && views.Identifiers != nil {
			v.Views = views.Identifiers
		}
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (c *Console) table(w http.ResponseWriter, r *http.Request, cl *call) error {
	wh, err := warehouseParam(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	ns, err := namespaceParam(q.Get("namespace"))
	if err != nil || len(ns) == 0 || q.Get("name") == "" {
		return fmt.Errorf("%w: a namespace and name are required", errBadRequest)
	}
	cat, err := cl.cl.catalog(wh)
	if err != nil {
		return err
	}
	id := adminclient.CatalogIdent{Namespace: ns, Name: q.Get("name")}
	kind := "table"
	var res adminclient.CatalogLoadResult
	if q.Get("kind") == "view" {
		kind = "view"
		res, err = cat.LoadView(cl.ctx, id)
	} else {
		res, err = cat.LoadTable(cl.ctx, id)
	}
	if err != nil {
		return err
	}
	v, err := tableView(kind, res)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// icebergMetadata is the part of table and view metadata the page shows.
type icebergMetadata struct {
	FormatVersion     int               `json:"format-version"`
	Location          string            `json:"location"`
	CurrentSchemaID   int               `json:"current-schema-id"`
	Schemas           []json.RawMessage `json:"schemas"`
	DefaultSpecID     int               `json:"default-spec-id"`
	PartitionSpecs    []json.RawMessage `json:"partition-specs"`
	Properties        map[string]string `json:"properties"`
	CurrentSnapshotID *int64            `json:"current-snapshot-id"`
	Snapshots         []struct {
		ID        int64             `json:"snapshot-id"`
		ParentID  int64             `json:"parent-snapshot-id"`
		Timestamp int64             `json:"timestamp-ms"`
		Summary   map[string]string `json:"summary"`
	} `json:"snapshots"`
	// Views keep their schema id in the current version.
	CurrentVersionID int `json:"current-version-id"`
	Versions         []struct {
		VersionID       int       `json:"version-id"`
		SchemaID        int       `json:"schema-id"`
		Representations []ViewSQL `json:"representations"`
	} `json:"versions"`
}

func tableView(kind string, res adminclient.CatalogLoadResult) (TableView, error) {
	var md icebergMetadata
	if err := json.Unmarshal(res.Metadata, &md); err != nil {
		return TableView{}, fmt.Errorf("decode %s metadata: %w", kind, err)
	}
	v := TableView{Kind: kind, MetadataLocation: res.MetadataLocation, FormatVersion: md.FormatVersion,
		Location: md.Location, Properties: md.Properties, Snapshots: []SnapshotView{}}
	if v.Properties == nil {
		v.Properties = map[string]string{}
	}
	schemaID := md.CurrentSchemaID
	if kind == "view" {
		for _, ver := range md.Versions {
			if ver.VersionID == md.CurrentVersionID {
				schemaID, v.SQL = ver.SchemaID, ver.Representations
			}
		}
	}
	v.Schema = pickByID(md.Schemas, "schema-id", schemaID)
	v.PartitionSpec = pickByID(md.PartitionSpecs, "spec-id", md.DefaultSpecID)
	if md.CurrentSnapshotID != nil {
		v.CurrentSnapshot = *md.CurrentSnapshotID
	}
	for _, s := range md.Snapshots {
		v.Snapshots = append(v.Snapshots, SnapshotView{ID: s.ID, ParentID: s.ParentID, Time: time.UnixMilli(s.Timestamp).UTC(),
			Operation: s.Summary["operation"], Rows: s.Summary["total-records"], Files: s.Summary["total-data-files"],
			Added: s.Summary["added-records"], AddedF: s.Summary["added-data-files"], Summary: s.Summary})
	}
	return v, nil
}

// pickByID returns the element of list whose field idKey is id.
func pickByID(list []json.RawMessage, idKey string, id int) json.RawMessage {
	for _, raw := range list {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		var got int
		if json.Unmarshal(m[idKey], &got) == nil && got == id {
			return raw
		}
	}
	return json.RawMessage("null")
}

// nsSegment encodes namespace levels as one path segment (levels joined by
// the unit separator, as the REST spec says).
func nsSegment(ns []string) string {
	esc := make([]string, len(ns))
	for i, l := range ns {
		esc[i] = url.PathEscape(l)
	}
	return strings.Join(esc, "%1F")
}

// catalogGet makes one signed GET to the warehouse's Iceberg REST API as
// the user and decodes the answer: the console asks for exactly one page.
func (c *Console) catalogGet(cl *call, wh, rel string, q url.Values, out any) error {
	ctx, cancel := context.WithTimeout(cl.ctx, 30*time.Second)
	defer cancel()
	target := "http://" + backendHost + adminclient.CatalogPathPrefix + "/" + url.PathEscape(wh) + "/" + rel
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, http.NoBody)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(nil)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	creds := aws.Credentials{AccessKeyID: cl.cl.creds.AccessKey, SecretAccessKey: cl.cl.creds.SecretKey}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hash, adminclient.CatalogSigningService, region, time.Now().UTC()); err != nil {
		return err
	}
	resp, err := cl.cl.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var body struct {
			Error *adminclient.CatalogError `json:"error"`
		}
		if json.Unmarshal(data, &body) == nil && body.Error != nil {
			body.Error.StatusCode = resp.StatusCode
			return body.Error
		}
		return &adminclient.CatalogError{Type: "HTTPError", Message: string(bytes.TrimSpace(data)), StatusCode: resp.StatusCode}
	}
	return json.Unmarshal(data, out)
}
