package rest_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestIdempotencyKey drives the spec's Idempotency-Key contract through the
// server with raw signed requests: 2xx and deterministic 4xx answers are
// replayed without running again, a commit retried with its key applies
// once (also when the retries race), and a key reused for another request
// is 422.
func TestIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	const v1 = "/_iceberg/v1/lake"
	status, body := e.do("GET", "/_iceberg/v1/config?warehouse=lake", "", true)
	var cfg struct {
		Lifetime string `json:"idempotency-key-lifetime"`
	}
	if err := json.Unmarshal([]byte(body), &cfg); status != 200 || err != nil || cfg.Lifetime != "PT30M" {
		t.Fatalf("config: %d %s, want idempotency-key-lifetime PT30M", status, body)
	}
	key := func(i int) map[string]string {
		return map[string]string{"Idempotency-Key": fmt.Sprintf("01900000-0000-7000-8000-%012d", i)}
	}

	// A create replayed is the first answer, not 409.
	nsBody := `{"namespace":["ns"],"properties":{"a":"1"}}`
	r1, b1 := e.doH("POST", v1+"/namespaces", nsBody, key(1))
	r2, b2 := e.doH("POST", v1+"/namespaces", nsBody, key(1))
	if r1.StatusCode != 200 || r2.StatusCode != 200 || b1 != b2 {
		t.Fatalf("create namespace twice with one key: %d %s / %d %s", r1.StatusCode, b1, r2.StatusCode, b2)
	}
	if _, err := cat.CreateTable(ctx, table.Identifier{"ns", "t"}, testSchema); err != nil {
		t.Fatal(err)
	}

	// A commit retried with its key applies once and answers the same.
	commit := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}`
	c1, cb1 := e.doH("POST", v1+"/namespaces/ns/tables/t", commit, key(2))
	c2, cb2 := e.doH("POST", v1+"/namespaces/ns/tables/t", commit, key(2))
	if c1.StatusCode != 200 || c2.StatusCode != 200 || metadataLocation(t, cb1) != metadataLocation(t, cb2) {
		t.Fatalf("commit twice with one key: %d / %d, %s vs %s", c1.StatusCode, c2.StatusCode, metadataLocation(t, cb1), metadataLocation(t, cb2))
	}
	if c1.Header.Get("ETag") == "" || c2.Header.Get("ETag") != c1.Header.Get("ETag") {
		t.Errorf("commit ETags %q / %q", c1.Header.Get("ETag"), c2.Header.Get("ETag"))
	}
	if tbl, err := cat.LoadTable(ctx, table.Identifier{"ns", "t"}); err != nil || tbl.MetadataLocation() != metadataLocation(t, cb1) {
		t.Fatalf("table after a retried commit: %v at %s, want version 1 at %s", err, tbl.MetadataLocation(), metadataLocation(t, cb1))
	}

	// Racing retries of one keyed commit: one applies, all answer it.
	var wg sync.WaitGroup
	locs := make([]string, 6)
	for i := range locs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, b := e.doH("POST", v1+"/namespaces/ns/tables/t", commit, key(3))
			if r.StatusCode == 200 {
				locs[i] = metadataLocation(t, b)
			}
		}()
	}
	wg.Wait()
	tbl, err := cat.LoadTable(ctx, table.Identifier{"ns", "t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range locs {
		if l != tbl.MetadataLocation() {
			t.Fatalf("racing retries answered %v, table at %s", locs, tbl.MetadataLocation())
		}
	}
	if !strings.Contains(tbl.MetadataLocation(), "/metadata/00002-") {
		t.Errorf("racing retries applied more than once: table at %s, want version 2", tbl.MetadataLocation())
	}

	// A deterministic 409 is final: after the obstacle goes, the retry
	// still answers 409 and creates nothing.
	create := `{"name":"t","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","type":"long","required":false}]}}`
	if r, b := e.doH("POST", v1+"/namespaces/ns/tables", create, key(4)); r.StatusCode != 409 {
		t.Fatalf("create over an existing table: %d %s", r.StatusCode, b)
	}
	if r, _ := e.doH("DELETE", v1+"/namespaces/ns/tables/t", "", key(5)); r.StatusCode != 204 {
		t.Fatalf("drop: %d", r.StatusCode)
	}
	if r, b := e.doH("DELETE", v1+"/namespaces/ns/tables/t", "", key(5)); r.StatusCode != 204 {
		t.Fatalf("drop retried with its key: %d %s, want the first answer 204", r.StatusCode, b)
	}
	if r, b := e.doH("POST", v1+"/namespaces/ns/tables", create, key(4)); r.StatusCode != 409 {
		t.Fatalf("409 retried with its key: %d %s, want the first answer 409", r.StatusCode, b)
	}
	if ok, _ := cat.CheckTableExists(ctx, table.Identifier{"ns", "t"}); ok {
		t.Error("a replayed 409 created the table")
	}

	// The key of one request is refused for another.
	if r, b := e.doH("POST", v1+"/namespaces", `{"namespace":["other"]}`, key(1)); r.StatusCode != 422 {
		t.Errorf("key reused for another request: %d %s, want 422", r.StatusCode, b)
	}
	if r, _ := e.doH("POST", v1+"/namespaces", `{"namespace":["other"]}`, map[string]string{"Idempotency-Key": "bad key"}); r.StatusCode != 400 {
		t.Errorf("malformed key: %d, want 400", r.StatusCode)
	}
}

func metadataLocation(t *testing.T, body string) string {
	t.Helper()
	var r struct {
		Loc string `json:"metadata-location"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return r.Loc
}
