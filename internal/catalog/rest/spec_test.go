package rest_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/twinlake/twinlake/internal/testsite/icetest"
)

// TestLoadTableETagAndSnapshotRefs: loadTable, create and commit answer an
// ETag; If-None-Match with it is 304; snapshots=refs returns only the
// snapshots refs point to, under another ETag, and iceberg-go reads it.
func TestLoadTableETagAndSnapshotRefs(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	if err := cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{"ns", "t"}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 3; i++ {
		data := icetest.Rows(i*10, i*10+10)
		tbl, err = tbl.AppendTable(ctx, data, 1024, nil)
		data.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	const path = "/_iceberg/v1/lake/namespaces/ns/tables/t"
	all, allBody := e.doH("GET", path, "", nil)
	refs, refsBody := e.doH("GET", path+"?snapshots=refs", "", nil)
	tagAll, tagRefs := all.Header.Get("ETag"), refs.Header.Get("ETag")
	if all.StatusCode != 200 || refs.StatusCode != 200 || tagAll == "" || tagRefs == "" || tagAll == tagRefs {
		t.Fatalf("load: %d ETag %q, refs: %d ETag %q; want two distinct ETags", all.StatusCode, tagAll, refs.StatusCode, tagRefs)
	}
	if n := len(snapshotsOf(t, allBody)); n != 3 {
		t.Errorf("snapshots=all: %d snapshots, want 3", n)
	}
	refSnaps := snapshotsOf(t, refsBody)
	if len(refSnaps) != 1 || refSnaps[0] != tbl.Metadata().CurrentSnapshot().SnapshotID {
		t.Errorf("snapshots=refs: %v, want only the current snapshot %d", refSnaps, tbl.Metadata().CurrentSnapshot().SnapshotID)
	}
	var lr struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(refsBody), &lr); err != nil {
		t.Fatal(err)
	}
	if md, err := table.ParseMetadataBytes(lr.Metadata); err != nil || md.CurrentSnapshot() == nil {
		t.Errorf("iceberg-go parses the refs metadata: %v", err)
	}
	for _, c := range []struct {
		query, inm string
		status     int
	}{
		{"", tagAll, 304}, {"?snapshots=refs", tagRefs, 304}, {"?snapshots=refs", tagAll, 200},
		{"", `W/` + tagAll + `, "x"`, 304}, {"", `"other"`, 200}, {"?snapshots=some", "", 400},
	} {
		r, b := e.doH("GET", path+c.query, "", map[string]string{"If-None-Match": c.inm})
		if r.StatusCode != c.status || (c.status == 304 && b != "") {
			t.Errorf("GET%s If-None-Match %s: %d %q, want %d", c.query, c.inm, r.StatusCode, b, c.status)
		}
	}
	// A commit's ETag is the next load's; the old one no longer matches.
	r, _ := e.doH("POST", path, `{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}`, nil)
	if r.StatusCode != 200 || r.Header.Get("ETag") == "" || r.Header.Get("ETag") == tagAll {
		t.Fatalf("commit: %d ETag %q", r.StatusCode, r.Header.Get("ETag"))
	}
	if again, _ := e.doH("GET", path, "", map[string]string{"If-None-Match": tagAll}); again.StatusCode != 200 || again.Header.Get("ETag") != r.Header.Get("ETag") {
		t.Errorf("load after commit: %d ETag %q, want 200 with the commit's ETag %q", again.StatusCode, again.Header.Get("ETag"), r.Header.Get("ETag"))
	}
	schema := `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","type":"long","required":false}]}`
	if cr, _ := e.doH("POST", "/_iceberg/v1/lake/namespaces/ns/tables", `{"name":"u","schema":`+schema+`}`, nil); cr.StatusCode != 200 || cr.Header.Get("ETag") == "" {
		t.Errorf("create: %d ETag %q", cr.StatusCode, cr.Header.Get("ETag"))
	}
}

func snapshotsOf(t *testing.T, body string) []int64 {
	t.Helper()
	var r struct {
		Metadata struct {
			Snapshots []struct {
				ID int64 `json:"snapshot-id"`
			} `json:"snapshots"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, s := range r.Metadata.Snapshots {
		ids = append(ids, s.ID)
	}
	return ids
}

// TestRegisterOverwrite: overwrite=true points an existing table at another
// of its metadata files in one step; without it the name is taken.
func TestRegisterOverwrite(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	if err := cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	id := table.Identifier{"ns", "t"}
	v0, err := cat.CreateTable(ctx, id, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	data := icetest.Rows(0, 10)
	defer data.Release()
	v1, err := v0.AppendTable(ctx, data, 1024, nil)
	if err != nil {
		t.Fatal(err)
	}
	const path = "/_iceberg/v1/lake/namespaces/ns/register"
	body := func(overwrite bool) string {
		return fmt.Sprintf(`{"name":"t","metadata-location":%q,"overwrite":%t}`, v0.MetadataLocation(), overwrite)
	}
	if status, b := e.do("POST", path, body(false), true); status != 409 {
		t.Fatalf("register over a table without overwrite: %d %s", status, b)
	}
	r, b := e.doH("POST", path, body(true), nil)
	if r.StatusCode != 200 || metadataLocation(t, b) != v0.MetadataLocation() || r.Header.Get("ETag") == "" {
		t.Fatalf("register with overwrite: %d %s", r.StatusCode, b)
	}
	back, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if back.MetadataLocation() != v0.MetadataLocation() || back.CurrentSnapshot() != nil {
		t.Errorf("after overwrite the table is at %s, want %s (before the append at %s)", back.MetadataLocation(), v0.MetadataLocation(), v1.MetadataLocation())
	}
	// The table commits on from the registered file.
	if _, err := back.AppendTable(ctx, data, 1024, nil); err != nil {
		t.Errorf("append after overwrite: %v", err)
	}
}

// TestPagingUnderChurn: pages are complete and never repeat or skip a
// table that lives throughout, while others are created and dropped; a
// token that is not one the listing returned is 400.
func TestPagingUnderChurn(t *testing.T) {
	e := newEnv(t)
	cat := e.catalog()
	ctx := t.Context()
	if err := cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	var stable []string
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("s%02d", i)
		stable = append(stable, name)
		if _, err := cat.CreateTable(ctx, table.Identifier{"ns", name}, testSchema); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			id := table.Identifier{"ns", fmt.Sprintf("s%02d-churn", i%20)}
			if _, err := cat.CreateTable(ctx, id, testSchema); err == nil {
				_ = cat.DropTable(ctx, id)
			}
		}
	}()
	const base = "/_iceberg/v1/lake/namespaces/ns/tables?pageSize=4"
	var seen []string
	token := ""
	for pages := 0; ; pages++ {
		path := base
		if token != "" {
			path += "&pageToken=" + token
		}
		status, body := e.do("GET", path, "", true)
		if status != 200 {
			t.Fatalf("page %d: %d %s", pages, status, body)
		}
		var lr struct {
			Identifiers []struct{ Name string } `json:"identifiers"`
			Next        string                  `json:"next-page-token"`
		}
		if err := json.Unmarshal([]byte(body), &lr); err != nil {
			t.Fatal(err)
		}
		if lr.Next != "" && len(lr.Identifiers) != 4 {
			t.Fatalf("page %d holds %d tables and a next token", pages, len(lr.Identifiers))
		}
		for _, id := range lr.Identifiers {
			if !strings.HasSuffix(id.Name, "-churn") {
				seen = append(seen, id.Name)
			}
		}
		if token = lr.Next; token == "" {
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	sort.Strings(seen)
	if !slices.Equal(seen, stable) {
		t.Errorf("listed %v, want each of %v once", seen, stable)
	}
	for _, bogus := range []string{"bogus", "czAz", "AAAAAAAAAAAAAAAA"} {
		if status, body := e.do("GET", base+"&pageToken="+bogus, "", true); status != 400 {
			t.Errorf("pageToken=%s: %d %s, want 400", bogus, status, body)
		}
	}
	// A token of another listing (the namespaces') is refused too.
	if err := cat.CreateNamespace(ctx, table.Identifier{"ns2"}, nil); err != nil {
		t.Fatal(err)
	}
	_, body := e.do("GET", "/_iceberg/v1/lake/namespaces?pageSize=1", "", true)
	var nl struct {
		Next string `json:"next-page-token"`
	}
	_ = json.Unmarshal([]byte(body), &nl)
	if status, _ := e.do("GET", base+"&pageToken="+nl.Next, "", true); nl.Next == "" || status != 400 {
		t.Errorf("a namespace listing's token on a table listing: %d (token %q), want 400", status, nl.Next)
	}
}

// TestConfigEndpointsExactlyServed: every advertised endpoint is served
// (answers something other than 404/405/406), and the spec endpoints not
// advertised answer 406.
func TestConfigEndpointsExactlyServed(t *testing.T) {
	e := newEnv(t)
	status, body := e.do("GET", "/_iceberg/v1/config?warehouse=lake", "", true)
	var cfg struct {
		Endpoints []string `json:"endpoints"`
	}
	if err := json.Unmarshal([]byte(body), &cfg); status != 200 || err != nil {
		t.Fatalf("config: %d %s", status, body)
	}
	if !slices.Contains(cfg.Endpoints, "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials") {
		t.Errorf("loadCredentials is not advertised: %v", cfg.Endpoints)
	}
	if !slices.Contains(cfg.Endpoints, "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign") {
		t.Errorf("signRequest is not advertised: %v", cfg.Endpoints)
	}
	fill := strings.NewReplacer("{prefix}", "lake", "{namespace}", "ns", "{table}", "t", "{view}", "v")
	for _, ep := range cfg.Endpoints {
		method, path, _ := strings.Cut(ep, " ")
		status, body := e.do(method, "/_iceberg"+fill.Replace(path), "{}", true)
		if status == 405 || status == 406 || (status == 404 && strings.Contains(body, "NotFoundException")) {
			t.Errorf("advertised %s answers %d %s", ep, status, body)
		}
	}
	for _, ep := range []string{
		"POST /v1/lake/namespaces/ns/tables/t/plan", "POST /v1/lake/namespaces/ns/tables/t/tasks",
		"POST /v1/lake/namespaces/ns/register-view", "GET /v1/lake/namespaces/ns/functions",
		"POST /v1/lake/namespaces/ns/tables/t/unregister",
	} {
		method, path, _ := strings.Cut(ep, " ")
		if slices.Contains(cfg.Endpoints, ep) {
			t.Errorf("%s is advertised", ep)
		}
		status, body := e.do(method, "/_iceberg"+path, "{}", true)
		if status != 406 || !strings.Contains(body, "UnsupportedOperationException") {
			t.Errorf("%s: %d %s, want 406 UnsupportedOperationException", ep, status, body)
		}
	}
}
