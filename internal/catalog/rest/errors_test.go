package rest_test

import (
	"encoding/json"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestErrorModel sends raw signed (and unsigned) requests and checks the
// Iceberg error model, the status code, and that a failed call changed
// nothing.
func TestErrorModel(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	if err := cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{"ns", "t"}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	before := tbl.MetadataLocation()
	const v1 = "/_iceberg/v1/lake"
	schema := `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","type":"long","required":false}]}`
	for _, c := range []struct {
		name, method, path, body string
		unsigned                 bool
		status                   int
		typ                      string
	}{
		{"unsigned", "GET", v1 + "/namespaces", "", true, 401, "NotAuthorizedException"},
		{"unknown warehouse config", "GET", "/_iceberg/v1/config?warehouse=nope", "", false, 404, "NoSuchWarehouseException"},
		{"config without warehouse", "GET", "/_iceberg/v1/config", "", false, 400, "BadRequestException"},
		{"unknown warehouse", "GET", "/_iceberg/v1/nope/namespaces", "", false, 404, "NoSuchWarehouseException"},
		{"bad json", "POST", v1 + "/namespaces", `{"namespace":`, false, 400, "BadRequestException"},
		{"trailing json", "POST", v1 + "/namespaces", `{"namespace":["z"]} {}`, false, 400, "BadRequestException"},
		{"invalid identifier", "POST", v1 + "/namespaces", `{"namespace":["a\u0001b"]}`, false, 400, "BadRequestException"},
		{"empty namespace", "POST", v1 + "/namespaces", `{"namespace":[]}`, false, 400, "BadRequestException"},
		{"namespace exists", "POST", v1 + "/namespaces", `{"namespace":["ns"]}`, false, 409, "AlreadyExistsException"},
		{"no such namespace", "GET", v1 + "/namespaces/zz", "", false, 404, "NoSuchNamespaceException"},
		{"namespace not empty", "DELETE", v1 + "/namespaces/ns", "", false, 409, "NamespaceNotEmptyException"},
		{"no such table", "GET", v1 + "/namespaces/ns/tables/zz", "", false, 404, "NoSuchTableException"},
		{"no such view", "GET", v1 + "/namespaces/ns/views/zz", "", false, 404, "NoSuchViewException"},
		{"table exists", "POST", v1 + "/namespaces/ns/tables", `{"name":"t","schema":` + schema + `}`, false, 409, "AlreadyExistsException"},
		{"location outside warehouse", "POST", v1 + "/namespaces/ns/tables", `{"name":"u","location":"s3://other/u","schema":` + schema + `}`, false, 400, "BadRequestException"},
		{"location of another table", "POST", v1 + "/namespaces/ns/tables", `{"name":"u","location":"` + tbl.Location() + `/inner","schema":` + schema + `}`, false, 400, "BadRequestException"},
		{"location in reserved prefix", "POST", v1 + "/namespaces/ns/tables", `{"name":"u","location":"s3://lake/.twinlake/u","schema":` + schema + `}`, false, 400, "BadRequestException"},
		{"unknown update type", "POST", v1 + "/namespaces/ns/tables/t", `{"requirements":[],"updates":[{"action":"explode"}]}`, false, 400, "BadRequestException"},
		{"unknown requirement type", "POST", v1 + "/namespaces/ns/tables/t", `{"requirements":[{"type":"assert-nothing"}],"updates":[]}`, false, 400, "BadRequestException"},
		{"failed requirement", "POST", v1 + "/namespaces/ns/tables/t", `{"requirements":[{"type":"assert-current-schema-id","current-schema-id":7}],"updates":[{"action":"set-properties","updates":{"a":"b"}}]}`, false, 409, "CommitFailedException"},
		{"commit to missing table", "POST", v1 + "/namespaces/ns/tables/zz", `{"requirements":[],"updates":[{"action":"set-properties","updates":{"a":"b"}}]}`, false, 404, "NoSuchTableException"},
		{"identifier mismatch", "POST", v1 + "/namespaces/ns/tables/t", `{"identifier":{"namespace":["ns"],"name":"other"},"requirements":[],"updates":[]}`, false, 400, "BadRequestException"},
		{"empty transaction", "POST", v1 + "/transactions/commit", `{"table-changes":[]}`, false, 400, "BadRequestException"},
		{"rename missing", "POST", v1 + "/tables/rename", `{"source":{"namespace":["ns"],"name":"zz"},"destination":{"namespace":["ns"],"name":"yy"}}`, false, 404, "NoSuchTableException"},
		{"bad page size", "GET", v1 + "/namespaces/ns/tables?pageSize=0", "", false, 400, "BadRequestException"},
		{"unknown route", "GET", v1 + "/bogus", "", false, 404, "NotFoundException"},
		{"unserved spec endpoint", "POST", v1 + "/namespaces/ns/tables/t/plan", "{}", false, 406, "UnsupportedOperationException"},
		{"property set and removed", "POST", v1 + "/namespaces/ns/properties", `{"removals":["a"],"updates":{"a":"b"}}`, false, 422, "UnprocessableEntityException"},
		{"bogus page token", "GET", v1 + "/namespaces/ns/tables?pageToken=bogus", "", false, 400, "BadRequestException"},
		{"bogus namespace page token", "GET", v1 + "/namespaces?pageToken=bogus", "", false, 400, "BadRequestException"},
		{"location with ..", "POST", v1 + "/namespaces/ns/tables", `{"name":"u","location":"s3://lake/ns/../u","schema":` + schema + `}`, false, 400, "BadRequestException"},
		{"location with .", "POST", v1 + "/namespaces/ns/tables", `{"name":"u","location":"s3://lake/ns/./u","schema":` + schema + `}`, false, 400, "BadRequestException"},
		{"location with escaped ..", "POST", v1 + "/namespaces/ns/tables", `{"name":"u","location":"s3://lake/ns/%2E%2E/u","schema":` + schema + `}`, false, 400, "BadRequestException"},
		{"location with empty segment", "POST", v1 + "/namespaces/ns/tables", `{"name":"u","location":"s3://lake/ns//u","schema":` + schema + `}`, false, 400, "BadRequestException"},
		{"location with port", "POST", v1 + "/namespaces/ns/tables", `{"name":"u","location":"s3://lake:9000/u","schema":` + schema + `}`, false, 400, "BadRequestException"},
		{"location is the reserved prefix", "POST", v1 + "/namespaces/ns/tables", `{"name":"u","location":"s3://lake/.twinlake","schema":` + schema + `}`, false, 400, "BadRequestException"},
		{"set-location with ..", "POST", v1 + "/namespaces/ns/tables/t", `{"requirements":[],"updates":[{"action":"set-location","location":"s3://lake/a/../b"}]}`, false, 400, "BadRequestException"},
		{"view location with ..", "POST", v1 + "/namespaces/ns/views", `{"name":"v","location":"s3://lake/../v","schema":` + schema + `,"view-version":{"version-id":1,"timestamp-ms":1,"schema-id":0,"summary":{},"representations":[{"type":"sql","sql":"SELECT 1","dialect":"spark"}],"default-namespace":["ns"]}}`, false, 400, "BadRequestException"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := e.do(c.method, c.path, c.body, !c.unsigned)
			if status != c.status {
				t.Fatalf("status = %d, want %d: %s", status, c.status, body)
			}
			var m struct {
				Error struct {
					Message, Type string
					Code          int
				}
			}
			if err := json.Unmarshal([]byte(body), &m); err != nil || m.Error.Type != c.typ || m.Error.Code != c.status || m.Error.Message == "" {
				t.Errorf("body = %s, want type %s code %d", body, c.typ, c.status)
			}
		})
	}
	after, err := cat.LoadTable(ctx, table.Identifier{"ns", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if after.MetadataLocation() != before || after.Properties()["a"] != "" {
		t.Errorf("failed calls changed the table: %s -> %s", before, after.MetadataLocation())
	}
	nss, err := cat.ListNamespaces(ctx, nil)
	if err != nil || len(nss) != 1 {
		t.Errorf("namespaces after failed calls = %v, %v", nss, err)
	}
	if status, _ := e.do("GET", v1+"/namespaces", "", true); status != 200 {
		t.Errorf("signed request: %d", status)
	}
}
