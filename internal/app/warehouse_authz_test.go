package app_test

import (
	"context"
	"errors"
	"testing"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
)

// TestWarehouseCallsBySTablesActions: the warehouse admin calls are also
// allowed by the warehouse-level s3tables: actions on the warehouse's ARN,
// under either spelling (AIStor's CreateWarehouse, AWS's
// CreateTableBucket), and only on the warehouses the policy names.
func TestWarehouseCallsBySTablesActions(t *testing.T) {
	ctx := context.Background()
	site := testsite.Start(t)
	root, err := adminclient.New(site.URL, adminclient.Credentials{AccessKey: site.AccessKey, SecretKey: site.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]string{
		// AWS's spelling for create and get, AIStor's for delete.
		"sales-owner": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
			"Action":["s3tables:CreateTableBucket","s3tables:GetTableBucket","s3tables:DeleteWarehouse"],
			"Resource":"arn:aws:s3tables:::bucket/sales"}]}`,
		"lister": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3tables:ListTableBuckets","Resource":"arn:aws:s3tables:::bucket/*"}]}`,
	}
	for name, doc := range policies {
		if err := root.CreatePolicy(ctx, name, []byte(doc)); err != nil {
			t.Fatal(err)
		}
		if err := root.AddUser(ctx, name, name+"-secret"); err != nil {
			t.Fatal(err)
		}
		if err := root.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{name}, User: name}); err != nil {
			t.Fatal(err)
		}
	}
	as := func(user string) *adminclient.Client {
		c, err := adminclient.New(site.URL, adminclient.Credentials{AccessKey: user, SecretKey: user + "-secret"}, adminclient.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	denied := func(what string, err error) {
		t.Helper()
		var ae *adminclient.Error
		if !errors.As(err, &ae) || ae.Code != "AccessDenied" {
			t.Fatalf("%s: %v, want AccessDenied", what, err)
		}
	}
	owner, lister := as("sales-owner"), as("lister")
	if _, err := owner.CreateWarehouse(ctx, "sales", adminclient.WarehouseCreateRequest{}); err != nil {
		t.Fatalf("create sales with s3tables:CreateTableBucket: %v", err)
	}
	_, err = owner.CreateWarehouse(ctx, "hr", adminclient.WarehouseCreateRequest{})
	denied("create hr", err)
	if _, err := owner.GetWarehouse(ctx, "sales"); err != nil {
		t.Fatalf("get sales with s3tables:GetTableBucket: %v", err)
	}
	_, err = owner.ListWarehouses(ctx)
	denied("list without a list action", err)
	if whs, err := lister.ListWarehouses(ctx); err != nil || len(whs) != 1 {
		t.Fatalf("list with s3tables:ListTableBuckets: %v, %v", whs, err)
	}
	_, err = lister.CreateWarehouse(ctx, "other", adminclient.WarehouseCreateRequest{})
	denied("lister creates", err)
	denied("lister removes", lister.RemoveWarehouse(ctx, "sales"))
	if err := owner.RemoveWarehouse(ctx, "sales"); err != nil {
		t.Fatalf("remove sales with s3tables:DeleteWarehouse: %v", err)
	}
	_, err = owner.GetWarehouse(ctx, "hr")
	denied("get hr", err)
	// Other admin calls stay closed to them.
	_, err = owner.ListUsers(ctx)
	denied("list users", err)
}
