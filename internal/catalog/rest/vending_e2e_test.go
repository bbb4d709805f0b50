package rest_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// vendedLoad is the part of a load result or loadCredentials answer the
// vending tests read.
type vendedLoad struct {
	MetadataLocation   string            `json:"metadata-location"`
	Config             map[string]string `json:"config"`
	StorageCredentials []struct {
		Prefix string            `json:"prefix"`
		Config map[string]string `json:"config"`
	} `json:"storage-credentials"`
}

// signedAs sends a request signed for s3tables with the given credential.
func (e *env) signedAs(ak, sk, method, path, body string, hdr map[string]string) (int, vendedLoad, string) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.site.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	sum := sha256.Sum256([]byte(body))
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := v4.NewSigner().SignHTTP(e.t.Context(), aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk}, req, hash, "s3tables", "us-east-1", time.Now()); err != nil {
		e.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out vendedLoad
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(data, &out); err != nil {
			e.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode, out, string(data)
}

// vendedClient is an S3 client with the credentials a load result vended.
func (e *env) vendedClient(cfg map[string]string) *minio.Client {
	e.t.Helper()
	c, err := minio.New(e.site.Addr, &minio.Options{Region: "us-east-1",
		Creds: miniocreds.NewStaticV4(cfg["s3.access-key-id"], cfg["s3.secret-access-key"], cfg["s3.session-token"])})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func isAccessDenied(err error) bool {
	return err != nil && minio.ToErrorResponse(err).Code == "AccessDenied"
}

// TestCredentialVending checks X-Iceberg-Access-Delegation: vended-credentials
// and loadCredentials through a real site: the credentials read the table's
// files and no other table's, and write them only for a caller who may
// commit the table.
func TestCredentialVending(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	cat := e.catalog()
	if err := cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	orders, err := cat.CreateTable(ctx, table.Identifier{"ns", "orders"}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	returns, err := cat.CreateTable(ctx, table.Identifier{"ns", "returns"}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	adm, err := adminclient.New(e.site.URL, adminclient.Credentials{AccessKey: e.site.AccessKey, SecretKey: e.site.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for user, pol := range map[string]string{"viewer": "tablesReadOnly", "writer": "tablesReadWrite"} {
		if err := adm.AddUser(ctx, user, user+"-secret"); err != nil {
			t.Fatal(err)
		}
		if err := adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{pol}, User: user}); err != nil {
			t.Fatal(err)
		}
	}
	const path = "/_iceberg/v1/lake/namespaces/ns/tables/orders"
	vend := map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials"}
	prefix := strings.TrimPrefix(orders.Location(), "s3://lake/")
	metaKey := strings.TrimPrefix(orders.MetadataLocation(), "s3://lake/")
	otherKey := strings.TrimPrefix(returns.MetadataLocation(), "s3://lake/")

	// Without the header nothing is vended.
	if code, lr, body := e.signedAs(e.site.AccessKey, e.site.SecretKey, http.MethodGet, path, "", nil); code != 200 || lr.Config["s3.session-token"] != "" || lr.StorageCredentials != nil {
		t.Fatalf("plain load: %d %s", code, body)
	}

	for _, c := range []struct {
		name, ak, sk string
		write        bool
	}{
		{"root", e.site.AccessKey, e.site.SecretKey, true},
		{"writer", "writer", "writer-secret", true},
		{"viewer", "viewer", "viewer-secret", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, lr, body := e.signedAs(c.ak, c.sk, http.MethodGet, path, "", vend)
			if code != 200 {
				t.Fatalf("load: %d %s", code, body)
			}
			for _, k := range []string{"s3.access-key-id", "s3.secret-access-key", "s3.session-token", "client.region"} {
				if lr.Config[k] == "" {
					t.Errorf("config lacks %s: %v", k, lr.Config)
				}
			}
			if len(lr.StorageCredentials) != 1 || lr.StorageCredentials[0].Prefix != orders.Location() ||
				lr.StorageCredentials[0].Config["s3.session-token"] != lr.Config["s3.session-token"] {
				t.Fatalf("storage-credentials = %+v, want one for %s", lr.StorageCredentials, orders.Location())
			}
			s3 := e.vendedClient(lr.Config)
			obj, err := s3.GetObject(ctx, "lake", metaKey, minio.GetObjectOptions{})
			if err == nil {
				_, err = io.ReadAll(obj)
				obj.Close()
			}
			if err != nil {
				t.Errorf("read metadata file: %v", err)
			}
			for o := range s3.ListObjects(ctx, "lake", minio.ListObjectsOptions{Prefix: prefix + "/", Recursive: true}) {
				if o.Err != nil {
					t.Errorf("list the table: %v", o.Err)
				}
			}
			if _, err := s3.StatObject(ctx, "lake", otherKey, minio.StatObjectOptions{}); err == nil {
				t.Errorf("another table's metadata file is readable")
			}
			obj, err = s3.GetObject(ctx, "lake", otherKey, minio.GetObjectOptions{})
			if err == nil {
				_, err = io.ReadAll(obj)
				obj.Close()
			}
			if !isAccessDenied(err) {
				t.Errorf("read another table: err = %v, want AccessDenied", err)
			}
			for o := range s3.ListObjects(ctx, "lake", minio.ListObjectsOptions{Prefix: "ns/", Recursive: true}) {
				if !isAccessDenied(o.Err) {
					t.Errorf("list outside the table: err = %v, want AccessDenied", o.Err)
				}
				break
			}
			_, err = s3.PutObject(ctx, "lake", prefix+"/data/"+c.name+".parquet", strings.NewReader("x"), 1, minio.PutObjectOptions{})
			switch {
			case c.write && err != nil:
				t.Errorf("write under the table: %v", err)
			case !c.write && !isAccessDenied(err):
				t.Errorf("read-only write under the table: err = %v, want AccessDenied", err)
			}

			// loadCredentials vends the same scope.
			code, lc, body := e.signedAs(c.ak, c.sk, http.MethodGet, path+"/credentials", "", nil)
			if code != 200 || len(lc.StorageCredentials) != 1 || lc.StorageCredentials[0].Prefix != orders.Location() {
				t.Fatalf("loadCredentials: %d %s", code, body)
			}
			if _, err := e.vendedClient(lc.StorageCredentials[0].Config).StatObject(ctx, "lake", metaKey, minio.StatObjectOptions{}); err != nil {
				t.Errorf("loadCredentials' credentials read the metadata file: %v", err)
			}
		})
	}

	// createTable vends too.
	code, lr, body := e.signedAs(e.site.AccessKey, e.site.SecretKey, http.MethodPost, "/_iceberg/v1/lake/namespaces/ns/tables",
		`{"name":"fresh","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}}`, vend)
	if code != 200 || len(lr.StorageCredentials) != 1 || lr.Config["s3.access-key-id"] == "" {
		t.Fatalf("create with vending: %d %s", code, body)
	}
	if _, err := e.vendedClient(lr.Config).StatObject(ctx, "lake", strings.TrimPrefix(lr.MetadataLocation, "s3://lake/"), minio.StatObjectOptions{}); err != nil {
		t.Errorf("created table's metadata file: %v", err)
	}
}
