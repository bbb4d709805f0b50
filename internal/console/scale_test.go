package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
)

// TestConsoleScale measures the console's list pages on a site with 1,000
// buckets and 10,000 tables: each page must answer within 200 ms (the
// pages ask the surfaces for one page, never for everything). It takes a
// minute or two to fill the site, so it runs only with
// TWINLAKE_CONSOLE_SCALE=1.
func TestConsoleScale(t *testing.T) {
	if os.Getenv("TWINLAKE_CONSOLE_SCALE") == "" {
		t.Skip("set TWINLAKE_CONSOLE_SCALE=1 to fill a site with 1,000 buckets and 10,000 tables and time the console's pages")
	}
	ctx := context.Background()
	site := testsite.Start(t)
	s3 := s3For(t, site, site.AccessKey, site.SecretKey)
	parallel(t, 1000, func(i int) error {
		return s3.MakeBucket(ctx, fmt.Sprintf("bucket-%04d", i), minio.MakeBucketOptions{})
	})
	if _, err := adminFor(t, site).CreateWarehouse(ctx, "lake", adminclient.WarehouseCreateRequest{}); err != nil {
		t.Fatal(err)
	}
	cat, err := adminclient.NewCatalog(site.URL, "lake", adminclient.Credentials{AccessKey: site.AccessKey, SecretKey: site.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateNamespace(ctx, []string{"big"}, nil); err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"}]}`)
	start := time.Now()
	parallel(t, 10000, func(i int) error {
		_, err := cat.CreateTable(ctx, []string{"big"}, adminclient.CatalogCreateTable{Name: fmt.Sprintf("t%05d", i), Schema: schema})
		return err
	})
	t.Logf("filled 1,000 buckets and 10,000 tables; tables took %v", time.Since(start).Round(time.Millisecond))

	c := newAPIClient(t, site)
	if code := c.signIn(site.AccessKey, site.SecretKey); code != http.StatusOK {
		t.Fatal(code)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"buckets page", "buckets?offset=900&limit=100", `"total":1001`},
		{"tables page", "warehouses/lake/tables?namespace=big&limit=200", `"t00199"`},
		{"namespaces", "warehouses/lake/namespaces", `"big"`},
		{"warehouses", "warehouses", `"lake"`},
		{"table", "warehouses/lake/table?namespace=big&name=t09999", `"schema"`},
		{"server", "server", `"buckets":1001`},
		{"sites", "sites", `"sites"`},
	} {
		var took []time.Duration
		for range 5 {
			t0 := time.Now()
			code, body := c.do("GET", tc.path, "")
			took = append(took, time.Since(t0))
			if code != http.StatusOK || !strings.Contains(body, tc.want) {
				t.Fatalf("%s: %d %.300s", tc.name, code, body)
			}
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		t.Logf("%-12s median %v, max %v", tc.name, took[2].Round(time.Microsecond), took[4].Round(time.Microsecond))
		if took[2] > 200*time.Millisecond {
			t.Errorf("%s: median %v, want under 200 ms", tc.name, took[2])
		}
	}
}

// parallel runs fn(0..n-1) on 8 workers and fails the test at the first error.
func parallel(t *testing.T, n int, fn func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					select {
					case errs <- fmt.Errorf("item %d: %w", i, err):
					default:
					}
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}
