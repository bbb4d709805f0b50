package rest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// wantVended checks that a load result carries credentials for location
// that read the metadata file at metaKey, and returns their access key.
func (e *env) wantVended(what string, lr vendedLoad, location, metaKey string) string {
	e.t.Helper()
	if lr.Config["s3.session-token"] == "" || len(lr.StorageCredentials) != 1 || lr.StorageCredentials[0].Prefix != location {
		e.t.Fatalf("%s: no credentials for %s: config %v, storage-credentials %+v", what, location, lr.Config, lr.StorageCredentials)
	}
	if _, err := e.vendedClient(lr.Config).StatObject(e.t.Context(), "lake", metaKey, minio.StatObjectOptions{}); err != nil {
		e.t.Fatalf("%s: the vended credentials do not read the metadata file: %v", what, err)
	}
	return lr.Config["s3.access-key-id"]
}

// TestVendingOnReplayAndNotModified: a createTable replayed for its
// Idempotency-Key with X-Iceberg-Access-Delegation gets fresh credentials
// (none are recorded with the answer, a staged create's included); a
// loadTable answered 304 Not Modified has no body, and the refresh endpoint
// the earlier load named vends fresh ones; a commit's answer carries none
// (the spec's CommitTableResponse has no config).
func TestVendingOnReplayAndNotModified(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	if code, body := e.do(http.MethodPost, "/_iceberg/v1/lake/namespaces", `{"namespace":["ns"]}`, true); code != 200 {
		t.Fatalf("create namespace: %d %s", code, body)
	}
	adm, err := adminclient.New(e.site.URL, adminclient.Credentials{AccessKey: e.site.AccessKey, SecretKey: e.site.SecretKey}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.AddUser(ctx, "writer", "writer-secret"); err != nil {
		t.Fatal(err)
	}
	if err := adm.AttachPolicy(ctx, adminclient.AttachRequest{Policies: []string{"tablesReadWrite"}, User: "writer"}); err != nil {
		t.Fatal(err)
	}
	const tables = "/_iceberg/v1/lake/namespaces/ns/tables"
	const create = `{"name":"orders","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}}`
	vend := map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials", "Idempotency-Key": "create-orders-1"}

	code, first, body := e.signedAs("writer", "writer-secret", http.MethodPost, tables, create, vend)
	if code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	location := first.StorageCredentials[0].Prefix
	metaKey := strings.TrimPrefix(first.MetadataLocation, "s3://lake/")
	firstKey := e.wantVended("create", first, location, metaKey)
	if got := first.Config["client.refresh-credentials-endpoint"]; got != "v1/lake/namespaces/ns/tables/orders/credentials" {
		t.Fatalf("refresh endpoint %q", got)
	}

	// The replay: the same table, fresh credentials.
	code, replay, body := e.signedAs("writer", "writer-secret", http.MethodPost, tables, create, vend)
	if code != 200 || replay.MetadataLocation != first.MetadataLocation {
		t.Fatalf("replay: %d %s", code, body)
	}
	if k := e.wantVended("replay", replay, location, metaKey); k == firstKey {
		t.Fatal("the replay answered the first answer's credentials")
	}
	if replay.Config["client.refresh-credentials-endpoint"] != first.Config["client.refresh-credentials-endpoint"] {
		t.Fatalf("replay refresh endpoint %q", replay.Config["client.refresh-credentials-endpoint"])
	}
	// A replay not asking for them gets none.
	code, plain, body := e.signedAs("writer", "writer-secret", http.MethodPost, tables, create, map[string]string{"Idempotency-Key": "create-orders-1"})
	if code != 200 || plain.Config["s3.session-token"] != "" || plain.StorageCredentials != nil {
		t.Fatalf("replay without vending: %d %s", code, body)
	}

	// A staged create's answer is not recorded with its credentials: the
	// retry vends afresh.
	staged := `{"name":"staged","stage-create":true,"schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}}`
	stagedHdr := map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials", "Idempotency-Key": "stage-1"}
	code, s1, body := e.signedAs("writer", "writer-secret", http.MethodPost, tables, staged, stagedHdr)
	if code != 200 || s1.Config["s3.session-token"] == "" {
		t.Fatalf("staged create: %d %s", code, body)
	}
	code, s2, body := e.signedAs("writer", "writer-secret", http.MethodPost, tables, staged, stagedHdr)
	if code != 200 || s2.Config["s3.session-token"] == "" || s2.Config["s3.access-key-id"] == s1.Config["s3.access-key-id"] {
		t.Fatalf("staged create retried: %d %s", code, body)
	}

	// 304: no body; the refresh endpoint vends.
	load := tables + "/orders"
	resp, _ := e.doH(http.MethodGet, load, "", map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials"})
	tag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || tag == "" {
		t.Fatalf("load: %d, ETag %q", resp.StatusCode, tag)
	}
	code, _, body = e.signedAs("writer", "writer-secret", http.MethodGet, load, "",
		map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials", "If-None-Match": tag})
	if code != http.StatusNotModified || body != "" {
		t.Fatalf("conditional load: %d %q, want 304 without a body", code, body)
	}
	code, refreshed, body := e.signedAs("writer", "writer-secret", http.MethodGet, "/_iceberg/"+first.Config["client.refresh-credentials-endpoint"], "", nil)
	if code != 200 {
		t.Fatalf("refresh endpoint: %d %s", code, body)
	}
	if len(refreshed.StorageCredentials) == 1 {
		refreshed.Config = refreshed.StorageCredentials[0].Config // loadCredentials has no config
	}
	if k := e.wantVended("refresh", refreshed, location, metaKey); k == firstKey {
		t.Fatal("the refresh endpoint answered old credentials")
	}

	// A commit's answer (CommitTableResponse) has no config: none vended,
	// on the first answer and on its replay.
	commit := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"owner":"writer"}}]}`
	commitHdr := map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials", "Idempotency-Key": "commit-1"}
	for _, what := range []string{"commit", "commit replay"} {
		code, cr, body := e.signedAs("writer", "writer-secret", http.MethodPost, load, commit, commitHdr)
		if code != 200 || cr.MetadataLocation == "" || cr.Config != nil || cr.StorageCredentials != nil {
			t.Fatalf("%s: %d %s", what, code, body)
		}
	}
}

// TestLoadViewWithVendingHeader: views have no data files, so nothing is
// vended for them; a view load or create asking for vended credentials is
// answered as without the header, with no credentials.
func TestLoadViewWithVendingHeader(t *testing.T) {
	e := newEnv(t)
	if code, body := e.do(http.MethodPost, "/_iceberg/v1/lake/namespaces", `{"namespace":["ns"]}`, true); code != 200 {
		t.Fatalf("create namespace: %d %s", code, body)
	}
	vend := map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials"}
	const view = `{"name":"v","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","type":"long","required":false}]},` +
		`"view-version":{"version-id":1,"timestamp-ms":1,"schema-id":0,"summary":{},"representations":[{"type":"sql","sql":"SELECT 1","dialect":"spark"}],"default-namespace":["ns"]}}`
	code, created, body := e.signedAs(e.site.AccessKey, e.site.SecretKey, http.MethodPost, "/_iceberg/v1/lake/namespaces/ns/views", view, vend)
	if code != 200 || created.MetadataLocation == "" || created.Config["s3.session-token"] != "" || created.StorageCredentials != nil {
		t.Fatalf("create view with the vending header: %d %s", code, body)
	}
	code, loaded, body := e.signedAs(e.site.AccessKey, e.site.SecretKey, http.MethodGet, "/_iceberg/v1/lake/namespaces/ns/views/v", "", vend)
	if code != 200 || loaded.MetadataLocation != created.MetadataLocation || loaded.Config["s3.session-token"] != "" || loaded.StorageCredentials != nil {
		t.Fatalf("load view with the vending header: %d %s", code, body)
	}
	if !strings.Contains(body, `"SELECT 1"`) {
		t.Fatalf("load view body: %s", body)
	}
}
