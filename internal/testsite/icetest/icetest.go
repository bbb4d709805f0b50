// Package icetest holds test helpers that drive twinlake's Iceberg catalog
// with apache/iceberg-go, as a data engineer's engine would: a REST catalog
// client signed for s3tables, Arrow rows to append, and scans.
package icetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icerest "github.com/apache/iceberg-go/catalog/rest"
	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // registers the s3:// file IO
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Schema is the (id long, name string) schema the helpers' rows fit.
var Schema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
	iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
)

// Catalog opens an iceberg-go REST catalog on warehouse wh of the site at
// url, signing with SigV4 for s3tables and reaching files through the
// site's S3 API. It is closed at test cleanup.
func Catalog(t testing.TB, url, accessKey, secretKey, wh string) *icerest.Catalog {
	t.Helper()
	cat, err := OpenCatalog(context.Background(), url, accessKey, secretKey, wh)
	if err != nil {
		t.Fatalf("open REST catalog: %v", err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	return cat
}

// OpenCatalog is Catalog for callers that handle the error themselves
// (a goroutine, a site that may be down) and close the catalog.
func OpenCatalog(ctx context.Context, url, accessKey, secretKey, wh string) (*icerest.Catalog, error) {
	return icerest.NewCatalog(ctx, "twinlake", url+"/_iceberg",
		icerest.WithWarehouseLocation(wh),
		icerest.WithSigV4RegionSvc("us-east-1", "s3tables"),
		icerest.WithAwsConfig(aws.Config{Region: "us-east-1",
			Credentials: credentials.NewStaticCredentialsProvider(accessKey, secretKey, "")}),
		icerest.WithAdditionalProps(iceberg.Properties{
			iceio.S3AccessKeyID: accessKey, iceio.S3SecretAccessKey: secretKey, iceio.S3Region: "us-east-1",
		}),
	)
}

// Rows builds an Arrow table of (id, name) rows with ids from..to-1.
func Rows(from, to int64) arrow.Table {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := from; i < to; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row-%d", i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
}

// ScanIDs reads every id of the table back, sorted.
func ScanIDs(ctx context.Context, tbl *table.Table) ([]int64, error) {
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	defer at.Release()
	var ids []int64
	for _, chunk := range at.Column(0).Data().Chunks() {
		a := chunk.(*array.Int64)
		for i := 0; i < a.Len(); i++ {
			ids = append(ids, a.Value(i))
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// Seq returns from..to-1.
func Seq(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// AppendRetry appends rows ids from..to-1, reloading and retrying when a
// concurrent commit wins (409 CommitFailed). It returns the retries.
func AppendRetry(ctx context.Context, cat *icerest.Catalog, id table.Identifier, from, to int64) (retries int, err error) {
	for {
		tbl, err := cat.LoadTable(ctx, id)
		if err != nil {
			return retries, err
		}
		data := Rows(from, to)
		_, err = tbl.AppendTable(ctx, data, 1024, nil)
		data.Release()
		if err == nil {
			return retries, nil
		}
		if !errors.Is(err, table.ErrCommitFailed) || retries > 50 {
			return retries, err
		}
		retries++
	}
}

// RandomRows builds n rows with ids from..from+n-1 whose names are size
// random bytes (hex), so their parquet file does not compress.
func RandomRows(from, n int64, size int) arrow.Table {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	buf := make([]byte, size/2)
	for i := from; i < from+n; i++ {
		rand.Read(buf)
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append(hex.EncodeToString(buf))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
}
