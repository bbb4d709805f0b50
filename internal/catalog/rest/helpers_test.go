package rest_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	icecatalog "github.com/apache/iceberg-go/catalog"
	icerest "github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // registers the s3:// file IO
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

// env is a running site with a warehouse and clients for it.
type env struct {
	t    *testing.T
	site *testsite.Site
	wh   string
	s3   *minio.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	site := testsite.Start(t)
	e := &env{t: t, site: site, wh: "lake"}
	adm, err := adminclient.New(site.URL, adminclient.Credentials{AccessKey: site.AccessKey, SecretKey: site.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateWarehouse(t.Context(), e.wh, adminclient.WarehouseCreateRequest{}); err != nil {
		t.Fatalf("create warehouse: %v", err)
	}
	e.s3, err = minio.New(site.Addr, &minio.Options{Creds: miniocreds.NewStaticV4(site.AccessKey, site.SecretKey, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// catalog opens an iceberg-go REST catalog on the warehouse.
func (e *env) catalog() *icerest.Catalog {
	e.t.Helper()
	return icetest.Catalog(e.t, e.site.URL, e.site.AccessKey, e.site.SecretKey, e.wh)
}

var _ icecatalog.Catalog = (*icerest.Catalog)(nil)

// do sends a raw request signed for s3tables (unsigned when sign is false)
// and returns the status and body.
func (e *env) do(method, path, body string, sign bool) (int, string) {
	e.t.Helper()
	resp, data := e.send(method, path, body, sign, nil)
	return resp.StatusCode, data
}

// doH sends a signed raw request with extra headers and returns the
// response (body closed) and its body.
func (e *env) doH(method, path, body string, hdr map[string]string) (*http.Response, string) {
	e.t.Helper()
	return e.send(method, path, body, true, hdr)
}

func (e *env) send(method, path, body string, sign bool, hdr map[string]string) (*http.Response, string) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.site.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if sign {
		sum := sha256.Sum256([]byte(body))
		hash := hex.EncodeToString(sum[:])
		req.Header.Set("X-Amz-Content-Sha256", hash)
		creds := aws.Credentials{AccessKeyID: e.site.AccessKey, SecretAccessKey: e.site.SecretKey}
		if err := v4.NewSigner().SignHTTP(e.t.Context(), creds, req, hash, "s3tables", "us-east-1", time.Now()); err != nil {
			e.t.Fatal(err)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

// getObject reads an object of the warehouse through the S3 API.
func (e *env) getObject(key string) ([]byte, error) {
	obj, err := e.s3.GetObject(e.t.Context(), e.wh, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	var buf bytes.Buffer
	_, err = io.Copy(&buf, obj)
	return buf.Bytes(), err
}
