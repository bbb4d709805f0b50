package rest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	icerest "github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

// TestIAMTablesAuthorization checks s3tables policies with apache/iceberg-go:
// a team policy gives one warehouse and not another, tablesReadOnly loads
// but cannot create, and a table-level resource names the table's UUID.
// Refusals are ForbiddenException.
func TestIAMTablesAuthorization(t *testing.T) {
	site := testsite.Start(t)
	ctx := context.Background()
	adm, err := adminclient.New(site.URL, adminclient.Credentials{AccessKey: site.AccessKey, SecretKey: site.SecretKey}, adminclient.Config{HTTPClient: site.HTTPClient})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, wh := range []string{"sales", "mkt"} {
		_, err := adm.CreateWarehouse(ctx, wh, adminclient.WarehouseCreateRequest{})
		must(err)
	}
	must(adm.CreatePolicy(ctx, "team-sales", []byte(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":["s3tables:*"],"Resource":["arn:aws:s3tables:::bucket/sales","arn:aws:s3tables:::bucket/sales/*"]},
		{"Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::sales","arn:aws:s3:::sales/*"]}]}`)))
	must(adm.AddUser(ctx, "ana", "ana-secret-1"))
	must(adm.AddGroupMembers(ctx, "sales", []string{"ana"}))
	must(adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"team-sales"}, Group: "sales"}))
	must(adm.AddUser(ctx, "viewer", "viewer-secret"))
	must(adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"tablesReadOnly", "readonly"}, User: "viewer"}))

	forbidden := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "Forbidden") {
			t.Fatalf("%s: err = %v, want ForbiddenException", what, err)
		}
	}

	ana := icetest.Catalog(t, site.URL, "ana", "ana-secret-1", "sales")
	must(ana.CreateNamespace(ctx, table.Identifier{"eu"}, iceberg.Properties{"owner": "ana"}))
	tbl, err := ana.CreateTable(ctx, table.Identifier{"eu", "orders"}, icetest.Schema)
	must(err)
	// Another team's warehouse is refused from the config call on.
	_, err = icerest.NewCatalog(ctx, "twinlake", site.URL+"/_iceberg", icerest.WithWarehouseLocation("mkt"),
		icerest.WithSigV4RegionSvc("us-east-1", "s3tables"),
		icerest.WithAwsConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("ana", "ana-secret-1", "")}))
	forbidden("ana opens mkt", err)

	viewer := icetest.Catalog(t, site.URL, "viewer", "viewer-secret", "sales")
	if _, err := viewer.LoadTable(ctx, table.Identifier{"eu", "orders"}); err != nil {
		t.Fatalf("viewer loads: %v", err)
	}
	_, err = viewer.CreateTable(ctx, table.Identifier{"eu", "returns"}, icetest.Schema)
	forbidden("viewer creates", err)

	// A policy naming one table by UUID reaches that table only.
	uuid := tbl.Metadata().TableUUID().String()
	must(adm.CreatePolicy(ctx, "orders-only", []byte(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":["s3tables:GetConfig"],"Resource":["arn:aws:s3tables:::bucket/sales"]},
		{"Effect":"Allow","Action":["s3tables:GetTable"],"Resource":["arn:aws:s3tables:::bucket/sales/table/`+uuid+`"]},
		{"Effect":"Allow","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::sales/*"]}]}`)))
	must(adm.AddUser(ctx, "olga", "olga-secret-1"))
	must(adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"orders-only"}, User: "olga"}))
	_, err = ana.CreateTable(ctx, table.Identifier{"eu", "returns"}, icetest.Schema)
	must(err)
	olga := icetest.Catalog(t, site.URL, "olga", "olga-secret-1", "sales")
	if _, err := olga.LoadTable(ctx, table.Identifier{"eu", "orders"}); err != nil {
		t.Fatalf("olga loads orders: %v", err)
	}
	_, err = olga.LoadTable(ctx, table.Identifier{"eu", "returns"})
	forbidden("olga loads returns", err)
}
