package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7/pkg/lifecycle"
	"github.com/minio/minio-go/v7/pkg/sse"
)

// TestStatBucketShowsSettings: stat on a bucket shows, as mc's does, its
// settings beside versioning (anonymous access, lifecycle, default
// encryption, object lock, tags), in text and JSON; for a user who may
// only list the bucket, each setting it cannot read says so instead of
// looking switched off.
func TestStatBucketShowsSettings(t *testing.T) {
	e := newSiteEnv(t)
	ctx := t.Context()
	e.must("mb", "--with-lock", "s1/vault")
	e.must("retention", "set", "--default", "s1/vault", "GOVERNANCE", "30d")
	e.must("anonymous", "set", "download", "s1/vault/public/")
	e.must("tag", "set", "s1/vault", "team=data&env=prod")
	if err := e.c.SetBucketEncryption(ctx, "vault", sse.NewConfigurationSSES3()); err != nil {
		t.Fatal(err)
	}
	lc := lifecycle.NewConfiguration()
	lc.Rules = []lifecycle.Rule{{ID: "expire", Status: "Enabled", Expiration: lifecycle.Expiration{Days: 30}}}
	if err := e.c.SetBucketLifecycle(ctx, "vault", lc); err != nil {
		t.Fatal(err)
	}
	out := e.must("stat", "s1/vault")
	for _, want := range []string{"Versioning : Enabled", "Anonymous  : public/=download", "ILM        : 1 rule(s)",
		"Encryption : SSE-S3", "Object lock: Enabled (default GOVERNANCE 30d)", "Tags       : env=prod, team=data"} {
		if !strings.Contains(out, want) {
			t.Errorf("stat lacks %q:\n%s", want, out)
		}
	}
	js := e.must("stat", "--json", "s1/vault")
	for _, want := range []string{`"anonymous":{"public/":"download"}`, `"ilmRules":1`, `"encryption":"SSE-S3"`,
		`"objectLock":"Enabled (default GOVERNANCE 30d)"`, `"tags":{"env":"prod","team":"data"}`} {
		if !strings.Contains(js, want) {
			t.Errorf("stat --json lacks %s:\n%s", want, js)
		}
	}
	e.must("mb", "s1/plain")
	out = e.must("stat", "s1/plain")
	for _, want := range []string{"Versioning : Unversioned", "Anonymous  : Disabled", "ILM        : Disabled",
		"Encryption : Disabled", "Object lock: Disabled", "Tags       : -"} {
		if !strings.Contains(out, want) {
			t.Errorf("stat of a bare bucket lacks %q:\n%s", want, out)
		}
	}

	doc := filepath.Join(t.TempDir(), "list.json")
	os.WriteFile(doc, []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:ListBucket"],"Resource":["arn:aws:s3:::vault"]}]}`), 0o600)
	e.must("admin", "policy", "create", "s1", "list-vault", doc)
	e.must("admin", "user", "add", "s1", "lister", "lister-secret-1")
	e.must("admin", "policy", "attach", "s1", "list-vault", "--user", "lister")
	e.must("alias", "set", "lister", e.site.URL, "lister", "lister-secret-1")
	out = e.must("stat", "lister/vault")
	if strings.Contains(out, "Disabled") || strings.Count(out, "? (not readable: AccessDenied)") != 7 {
		t.Errorf("stat by a user who may only list:\n%s", out)
	}
}
