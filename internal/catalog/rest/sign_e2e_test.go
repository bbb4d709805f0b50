package rest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// remoteSigner is an http.RoundTripper that has every request signed by a
// table's sign endpoint before sending it, as Iceberg's S3 file IO does
// with s3.remote-signing-enabled: the S3 client itself holds no
// credential.
type remoteSigner struct {
	catalog, endpoint string // the catalog's base URL and the endpoint relative to it
	ak, sk            string // the caller, signing its calls to the catalog
}

func (rs remoteSigner) sign(ctx context.Context, method, uri string, hdr http.Header, body *string) (int, []byte, error) {
	in := map[string]any{"region": "us-east-1", "uri": uri, "method": method, "headers": hdr}
	if body != nil {
		in["body"] = *body
	}
	payload, _ := json.Marshal(in)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rs.catalog+"/"+rs.endpoint, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	sum := sha256.Sum256(payload)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: rs.ak, SecretAccessKey: rs.sk}, req, hash, "s3tables", "us-east-1", time.Now()); err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

func (rs remoteSigner) RoundTrip(req *http.Request) (*http.Response, error) {
	hdr := req.Header.Clone()
	if hdr.Get("X-Amz-Content-Sha256") == "" {
		hdr.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	}
	code, raw, err := rs.sign(req.Context(), req.Method, req.URL.String(), hdr, nil)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("sign %s %s: %d %s", req.Method, req.URL, code, raw)
	}
	var res struct {
		URI     string              `json:"uri"`
		Headers map[string][]string `json:"headers"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.Header = http.Header(res.Headers)
	return http.DefaultTransport.RoundTrip(out)
}

// remoteS3 is an aws-sdk-go-v2 S3 client without credentials whose
// requests the table's sign endpoint signs for ak/sk.
func (e *env) remoteS3(endpoint, ak, sk string) *s3.Client {
	return s3.New(s3.Options{BaseEndpoint: aws.String(e.site.URL), Region: "us-east-1", UsePathStyle: true,
		Credentials: aws.AnonymousCredentials{}, RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		HTTPClient: &http.Client{Transport: remoteSigner{catalog: e.site.URL + "/_iceberg", endpoint: endpoint, ak: ak, sk: sk}}})
}

// TestRemoteSigning: loadTable with X-Iceberg-Access-Delegation:
// remote-signing names the table's sign endpoint; aws-sdk-go-v2 requests
// signed there read and list the table's files, and write them only for a
// caller who may commit the table; nothing outside the table's location
// is signed, a signature does not carry over to another key, and a caller
// without rights on the table gets nothing signed.
func TestRemoteSigning(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	if code, body := e.do(http.MethodPost, "/_iceberg/v1/lake/namespaces", `{"namespace":["ns"]}`, true); code != 200 {
		t.Fatalf("create namespace: %d %s", code, body)
	}
	const create = `{"name":"%s","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}}`
	var metaKeys []string
	for _, name := range []string{"orders", "returns"} {
		code, lr, body := e.signedAs(e.site.AccessKey, e.site.SecretKey, http.MethodPost, "/_iceberg/v1/lake/namespaces/ns/tables", fmt.Sprintf(create, name), nil)
		if code != 200 {
			t.Fatalf("create %s: %d %s", name, code, body)
		}
		metaKeys = append(metaKeys, strings.TrimPrefix(lr.MetadataLocation, "s3://lake/"))
	}
	ordersMeta, returnsMeta := metaKeys[0], metaKeys[1]
	prefix := ordersMeta[:strings.Index(ordersMeta, "/metadata/")]
	adm, err := adminclient.New(e.site.URL, adminclient.Credentials{AccessKey: e.site.AccessKey, SecretKey: e.site.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for user, pol := range map[string]string{"viewer": "tablesReadOnly", "writer": "tablesReadWrite", "nobody": "diagnostics"} {
		if err := adm.AddUser(ctx, user, user+"-secret"); err != nil {
			t.Fatal(err)
		}
		if err := adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{pol}, User: user}); err != nil {
			t.Fatal(err)
		}
	}

	code, lr, body := e.signedAs("viewer", "viewer-secret", http.MethodGet, "/_iceberg/v1/lake/namespaces/ns/tables/orders", "",
		map[string]string{"X-Iceberg-Access-Delegation": "remote-signing"})
	ep := lr.Config["signer.endpoint"]
	if code != 200 || lr.Config["s3.remote-signing-enabled"] != "true" || ep != "v1/lake/namespaces/ns/tables/orders/sign" ||
		lr.Config["s3.signer.endpoint"] != ep || lr.Config["s3.access-key-id"] != "" || lr.StorageCredentials != nil {
		t.Fatalf("load with remote signing: %d %s", code, body)
	}

	viewer, writer := e.remoteS3(ep, "viewer", "viewer-secret"), e.remoteS3(ep, "writer", "writer-secret")
	get := func(c *s3.Client, key string) (string, error) {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("lake"), Key: aws.String(key)})
		if err != nil {
			return "", err
		}
		defer out.Body.Close()
		b, err := io.ReadAll(out.Body)
		return string(b), err
	}
	put := func(c *s3.Client, key, data string) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("lake"), Key: aws.String(key), Body: strings.NewReader(data)})
		return err
	}
	refused := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "ForbiddenException") {
			t.Fatalf("%s: %v, want the sign endpoint's 403 ForbiddenException", what, err)
		}
	}

	// Reads within the table, by a read-only caller.
	if md, err := get(viewer, ordersMeta); err != nil || !strings.Contains(md, `"table-uuid"`) {
		t.Fatalf("viewer reads the metadata file: %q, %v", md, err)
	}
	list, err := viewer.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("lake"), Prefix: aws.String(prefix + "/")})
	if err != nil || len(list.Contents) == 0 {
		t.Fatalf("viewer lists the table: %+v, %v", list, err)
	}
	// Writes: only by the writer, only within the table.
	refused("viewer writes", put(viewer, prefix+"/data/v.parquet", "x"))
	if err := put(writer, prefix+"/data/w.parquet", "written through a remote signature"); err != nil {
		t.Fatalf("writer writes under the table: %v", err)
	}
	if got, err := e.getObject(prefix + "/data/w.parquet"); err != nil || string(got) != "written through a remote signature" {
		t.Fatalf("the written file: %q, %v", got, err)
	}
	if _, err := writer.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("lake"), Key: aws.String(prefix + "/data/w.parquet")}); err != nil {
		t.Fatalf("writer deletes under the table: %v", err)
	}
	// Outside the table: another table's files, the namespace, other buckets.
	_, err = get(viewer, returnsMeta)
	refused("read another table", err)
	refused("write another table", put(writer, strings.TrimSuffix(returnsMeta, ".metadata.json")+".x", "x"))
	_, err = writer.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("lake"), Prefix: aws.String("ns/")})
	refused("list the namespace", err)
	_, err = writer.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("lake"), Delete: &types.Delete{
		Objects: []types.ObjectIdentifier{{Key: aws.String(returnsMeta)}}}})
	if err == nil {
		t.Fatal("a multi-object delete of another table's file was signed")
	}
	if _, err := e.getObject(returnsMeta); err != nil {
		t.Fatalf("another table's file is gone: %v", err)
	}
	refused("another bucket", put(e.remoteS3(ep, "writer", "writer-secret"), "../other/k", "x"))

	// A signature is for its request only: moved to another key, S3 refuses it.
	hdr := http.Header{"X-Amz-Content-Sha256": {"UNSIGNED-PAYLOAD"}}
	rs := remoteSigner{catalog: e.site.URL + "/_iceberg", endpoint: ep, ak: "viewer", sk: "viewer-secret"}
	code, raw, err := rs.sign(ctx, http.MethodGet, e.site.URL+"/lake/"+ordersMeta, hdr, nil)
	if err != nil || code != 200 {
		t.Fatalf("sign: %d %s %v", code, raw, err)
	}
	var res struct {
		Headers map[string][]string `json:"headers"`
	}
	json.Unmarshal(raw, &res)
	moved, _ := http.NewRequest(http.MethodGet, e.site.URL+"/lake/"+prefix+"/metadata/other.json", nil)
	moved.Header = http.Header(res.Headers)
	resp, err := http.DefaultClient.Do(moved)
	if err != nil {
		t.Fatal(err)
	}
	moreBody, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(moreBody), "SignatureDoesNotMatch") {
		t.Fatalf("a signature moved to another key: %d %s", resp.StatusCode, moreBody)
	}
	// A caller without rights on the table gets nothing signed.
	code, raw, _ = remoteSigner{catalog: rs.catalog, endpoint: ep, ak: "nobody", sk: "nobody-secret"}.sign(ctx, http.MethodGet, e.site.URL+"/lake/"+ordersMeta, hdr, nil)
	if code != 403 || !strings.Contains(string(raw), "ForbiddenException") {
		t.Fatalf("sign for a caller without table rights: %d %s", code, raw)
	}
	// Bad requests.
	for _, c := range []struct{ method, uri string }{{"GET", "ftp://x/lake/k"}, {"TRACE", e.site.URL + "/lake/" + ordersMeta}} {
		code, raw, _ := rs.sign(ctx, c.method, c.uri, hdr, nil)
		if code != 400 && code != 403 {
			t.Fatalf("sign %s %s: %d %s, want a refusal", c.method, c.uri, code, raw)
		}
	}
}
