package rest

import (
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/metrics"
	"github.com/twinlake/twinlake/internal/objects"
)

// TestSizeGaugesCountAtMostEveryTTL: the catalog size gauges count the
// catalog on a scrape, and serve that count to the scrapes of the next 30
// seconds.
func TestSizeGaugesCountAtMostEveryTTL(t *testing.T) {
	ctx := t.Context()
	m := meta.NewMem()
	blobs, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	obj, err := objects.New(m, blobs, objects.Config{SiteID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.New(m, obj, catalog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := cat.CreateWarehouse(ctx, "lake", catalog.CreateWarehouseOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateNamespace(ctx, "lake", []string{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(1_700_000_000, 0)
	c := &sizeCollector{cat: cat, now: func() time.Time { return clock }}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	tables := func() float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == metrics.CatalogTables {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatal("no tables gauge")
		return 0
	}
	if n := tables(); n != 0 {
		t.Fatalf("tables %v, want 0", n)
	}
	schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "x", Type: iceberg.PrimitiveTypes.Int64})
	if _, err := cat.CreateTable(ctx, "lake", catalog.CreateTableRequest{Ident: catalog.Ident{Namespace: []string{"ns"}, Name: "t"}, Schema: schema}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(sizeTTL - time.Second)
	if n := tables(); n != 0 {
		t.Fatalf("within the TTL: tables %v, want the count of 0 kept", n)
	}
	clock = clock.Add(2 * time.Second)
	if n := tables(); n != 1 {
		t.Fatalf("past the TTL: tables %v, want 1", n)
	}
}
