package rest_test

import (
	"testing"

	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/catalogtest"
)

// TestRESTCatalogConformance runs apache/iceberg-go's catalog conformance
// suite through its REST client against a real site.
func TestRESTCatalogConformance(t *testing.T) {
	e := newEnv(t)
	catalogtest.RunCatalogTests(t, catalogtest.Config{
		SupportsNamespaceProperties: true,
		NewCatalog:                  func(t *testing.T) icecatalog.Catalog { return e.catalog() },
	})
}
