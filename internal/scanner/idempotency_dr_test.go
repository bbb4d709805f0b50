package scanner_test

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
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	icerest "github.com/apache/iceberg-go/catalog/rest"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

// keyedCommits is an HTTP transport that sends an Idempotency-Key with
// every table commit and keeps the last commit's request and answer, as a
// client that must retry it would.
type keyedCommits struct {
	key  string
	mu   sync.Mutex
	path string
	body []byte
	resp []byte
}

func (k *keyedCommits) RoundTrip(r *http.Request) (*http.Response, error) {
	commit := r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/tables/")
	var body []byte
	if commit && r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.Header.Set("Idempotency-Key", k.key)
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || !commit {
		return resp, err
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(data))
	k.mu.Lock()
	k.path, k.body, k.resp = r.URL.Path, body, data
	k.mu.Unlock()
	return resp, nil
}

// send posts body to path on a site, signed for s3tables, with headers.
func send(t *testing.T, s *testsite.Member, path string, body []byte, hdr map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	creds := aws.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hash, "s3tables", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func metadataLocationOf(t *testing.T, body []byte) string {
	t.Helper()
	var lr struct {
		MetadataLocation string `json:"metadata-location"`
	}
	if err := json.Unmarshal(body, &lr); err != nil || lr.MetadataLocation == "" {
		t.Fatalf("not a load result (%v): %.200s", err, body)
	}
	return lr.MetadataLocation
}

// TestIdempotencyKeyAfterFailover: a commit sent with an Idempotency-Key
// lands on the primary; the key replicates with the catalog; after a
// failover, the client's retry of the same request with the same key on
// the promoted site gets the original answer and commits nothing; the same
// request under a fresh key is refused there (its requirement no longer
// holds), which is what a retry without the replicated key would get.
func TestIdempotencyKeyAfterFailover(t *testing.T) {
	p := newDRPair(t, tablesSettings)
	ctx := context.Background()
	cat := p.catalog(p.primary)
	id := table.Identifier{"ns", "t"}
	newTable(t, cat, id, nil)
	if _, err := icetest.AppendRetry(ctx, cat, id, 0, 5); err != nil {
		t.Fatal(err)
	}
	const key = "01938a5e-7c2f-7d1a-9b6e-0c1d2e3f4a5b"
	rec := &keyedCommits{key: key}
	keyed, err := icerest.NewCatalog(ctx, "twinlake", p.primary.URL+"/_iceberg",
		icerest.WithWarehouseLocation(p.warehous), icerest.WithSigV4RegionSvc("us-east-1", "s3tables"),
		icerest.WithCustomTransport(rec),
		icerest.WithAwsConfig(aws.Config{Region: "us-east-1",
			Credentials: credentials.NewStaticCredentialsProvider(p.primary.AccessKey, p.primary.SecretKey, "")}),
		icerest.WithAdditionalProps(iceberg.Properties{iceio.S3AccessKeyID: p.primary.AccessKey,
			iceio.S3SecretAccessKey: p.primary.SecretKey, iceio.S3Region: "us-east-1"}))
	if err != nil {
		t.Fatal(err)
	}
	defer keyed.Close()
	tbl, err := keyed.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	data := icetest.Rows(5, 10)
	tbl, err = tbl.AppendTable(ctx, data, 1024, nil)
	data.Release()
	if err != nil {
		t.Fatalf("keyed append on the primary: %v", err)
	}
	original := metadataLocationOf(t, rec.resp)
	if original != tbl.MetadataLocation() {
		t.Fatalf("recorded answer names %s, the table is at %s", original, tbl.MetadataLocation())
	}
	snapshots := len(tbl.Metadata().Snapshots())

	// The commit and its key reach the replica.
	waitVerified(t, p.replica, "ns", "t", metadataVersion(tbl), 20*time.Second)
	sum := sha256.Sum256([]byte(key))
	object := catalog.IdempotencyPrefix + hex.EncodeToString(sum[:]) + ".json"
	testsite.Eventually(t, 15*time.Second, func() error {
		_, err := p.s3(p.replica).StatObject(ctx, p.warehous, object, minio.StatObjectOptions{})
		return err
	})
	p.failover()

	status, body := send(t, p.replica, rec.path, rec.body, map[string]string{"Idempotency-Key": key})
	if status != http.StatusOK || metadataLocationOf(t, body) != original {
		t.Fatalf("retry on the promoted site: %d %.300s, want 200 with %s", status, body, original)
	}
	promoted, err := p.catalog(p.replica).LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if promoted.MetadataLocation() != original || len(promoted.Metadata().Snapshots()) != snapshots {
		t.Errorf("after the retry the promoted site is at %s with %d snapshots, want %s with %d",
			promoted.MetadataLocation(), len(promoted.Metadata().Snapshots()), original, snapshots)
	}
	// The same request with a fresh key runs, and its requirement fails.
	status, body = send(t, p.replica, rec.path, rec.body, map[string]string{"Idempotency-Key": "fresh-" + key})
	if status != http.StatusConflict {
		t.Errorf("the request under a fresh key: %d %.200s, want 409", status, body)
	}
	if ids := scan(t, p.catalog(p.replica), id); fmt.Sprint(ids) != fmt.Sprint(icetest.Seq(0, 10)) {
		t.Errorf("rows on the promoted site: %v, want 0..9", ids)
	}
}
