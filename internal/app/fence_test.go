package app_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/app"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/testsite"
)

// fencedStore is a site's metadata as a node that stops leading sees it:
// while fenced, every commit fails with meta.ErrFenced and writes nothing,
// as the etcd store's do once the leader key is gone.
type fencedStore struct {
	meta.Store
	fenced  atomic.Bool
	refused atomic.Int64
}

func (s *fencedStore) NewBatch() meta.Batch { return &fencedBatch{Batch: s.Store.NewBatch(), s: s} }

type fencedBatch struct {
	meta.Batch
	s     *fencedStore
	after []func(error)
}

func (b *fencedBatch) AfterCommit(fn func(error)) { b.after = append(b.after, fn) }

func (b *fencedBatch) Commit(sync bool) (err error) {
	defer func() {
		for _, fn := range b.after {
			fn(err)
		}
	}()
	if b.s.fenced.Load() {
		b.s.refused.Add(1)
		return meta.ErrFenced
	}
	return b.Batch.Commit(sync)
}

// TestFencedWriteAsksToBeRetried: a write that the site's fence refuses
// (the node serving it stopped leading meanwhile) was not done, so each
// surface answers it 503 with Retry-After, in its own error format, never
// 500; and the clients that retry such answers (minio-go, the admin and
// catalog clients) see their write land once a leader serves again.
func TestFencedWriteAsksToBeRetried(t *testing.T) {
	pebble, err := meta.OpenPebble(filepath.Join(t.TempDir(), "meta"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pebble.Close() }) // after the site's own cleanup
	store := &fencedStore{Store: pebble}
	site := testsite.Start(t, testsite.WithApp(func(c *app.Config) { c.Meta = store }))
	ctx := t.Context()
	s3, err := minio.New(site.Addr, &minio.Options{Creds: miniocreds.NewStaticV4(site.AccessKey, site.SecretKey, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	creds := adminclient.Credentials{AccessKey: site.AccessKey, SecretKey: site.SecretKey}
	adm, err := adminclient.New(site.URL, creds, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s3.MakeBucket(ctx, "data", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateWarehouse(ctx, "lake", adminclient.WarehouseCreateRequest{}); err != nil {
		t.Fatal(err)
	}

	// Fenced, each surface asks for a retry in its own format.
	store.fenced.Store(true)
	raw := func(method, path, service, body string) answer {
		t.Helper()
		req, err := http.NewRequest(method, site.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(body))
		hash := hex.EncodeToString(sum[:])
		req.Header.Set("X-Amz-Content-Sha256", hash)
		req.Header.Set("Content-Type", "application/json")
		c := aws.Credentials{AccessKeyID: site.AccessKey, SecretAccessKey: site.SecretKey}
		if err := v4.NewSigner().SignHTTP(ctx, c, req, hash, service, "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		a := send(site, req)
		if a.err != nil {
			t.Fatal(a.err)
		}
		return a
	}
	for _, c := range []struct {
		name, method, path, service, body, want string
		code                                    func(body string) string
	}{
		{"s3 put", "PUT", "/data/k", "s3", "hello", "ServiceUnavailable", func(b string) string {
			var e struct{ Code string }
			_ = xml.Unmarshal([]byte(b), &e)
			return e.Code
		}},
		{"catalog create namespace", "POST", "/_iceberg/v1/lake/namespaces", "s3tables", `{"namespace":["ns"]}`, "ServiceUnavailableException", func(b string) string {
			var e struct{ Error struct{ Type string } }
			_ = json.Unmarshal([]byte(b), &e)
			return e.Error.Type
		}},
		{"admin config set", "PUT", adminclient.PathConfig + "/api", "s3", `{"requests_max":"100"}`, adminclient.CodeUnavailable, func(b string) string {
			var e adminclient.ErrorBody
			_ = json.Unmarshal([]byte(b), &e)
			return e.Code
		}},
	} {
		before := store.refused.Load()
		a := raw(c.method, c.path, c.service, c.body)
		if a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" || c.code(a.body) != c.want {
			t.Errorf("%s, fenced: %d (Retry-After %q) %s; want 503 %s with Retry-After", c.name, a.status, a.header.Get("Retry-After"), a.body, c.want)
		}
		if store.refused.Load() == before {
			t.Errorf("%s: no commit was refused; the test fenced nothing", c.name)
		}
	}

	// Clients that retry: each write is sent while fenced, and lands once
	// the fence lifts.
	cat, err := adminclient.NewCatalog(site.URL, "lake", creds, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	wg.Go(func() {
		_, errs[0] = s3.PutObject(ctx, "data", "k", bytes.NewReader([]byte("hello")), 5, minio.PutObjectOptions{})
	})
	wg.Go(func() { _, errs[1] = cat.CreateNamespace(ctx, []string{"ns"}, nil) })
	wg.Go(func() { _, errs[2] = adm.SetConfig(ctx, "api", map[string]string{"requests_max": "100"}) })
	deadline := time.Now().Add(10 * time.Second)
	for store.refused.Load() < 6 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	store.fenced.Store(false)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("write %d, retried past the fence: %v", i, err)
		}
	}
	obj, err := s3.GetObject(ctx, "data", "k", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if data, err := io.ReadAll(obj); err != nil || string(data) != "hello" {
		t.Fatalf("object after the retried PUT: %q, %v", data, err)
	}
	if _, err := cat.LoadNamespace(context.Background(), []string{"ns"}); err != nil {
		t.Fatalf("namespace after the retried create: %v", err)
	}
}
