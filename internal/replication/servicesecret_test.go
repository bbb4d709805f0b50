package replication

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/config"
	"github.com/twinlake/twinlake/internal/iam"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/trace"
)

// TestServiceSecretSealed: with a SecretStore (the site's IAM store), the
// service credential's secret is kept sealed beside the state, never in
// it; a state stored in the clear by an older build is sealed at the next
// start; a missing sealed secret fails the start with a clear error.
func TestServiceSecretSealed(t *testing.T) {
	m := meta.NewMem()
	secrets, err := iam.Open(m, iam.Credential{AccessKey: "root", SecretKey: "root-secret-1"}, iam.Config{})
	if err != nil {
		t.Fatal(err)
	}
	bl, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ol, err := objects.New(m, bl, objects.Config{SiteID: "site-a"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := config.New(m, config.Config{})
	if err != nil {
		t.Fatal(err)
	}
	open := func() (*Engine, error) {
		return New(Config{Meta: m, Objects: ol, Settings: st, Trace: trace.New("a"), SiteID: "site-a", Secrets: secrets,
			Dial: func(string, Credentials) (Peer, error) { return nil, errors.New("no peers here") }})
	}
	const secret = "0123456789abcdef0123456789abcdef01234567"
	legacy := &State{Sites: []Site{{ID: "site-a", Name: "a"}, {ID: "site-b", Name: "b"}},
		ServiceAccessKey: "site-replicator-x", ServiceSecretKey: secret, Updated: 1}
	b := m.NewBatch()
	b.Set([]byte(keyState), encode(legacy))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the conversion, then a plain restart
		e, err := open()
		if err != nil {
			t.Fatal(err)
		}
		if got := e.state.Load(); got.ServiceSecretKey != secret || got.ServiceAccessKey != legacy.ServiceAccessKey {
			t.Fatalf("start %d: service credential %q/%q", i, got.ServiceAccessKey, got.ServiceSecretKey)
		}
		meta.Scan(m, nil, nil, func(k, v []byte) (bool, error) {
			if bytes.Contains(v, []byte(secret)) {
				t.Errorf("start %d: %s holds the service secret in the clear", i, k)
			}
			return true, nil
		})
	}
	// Saving a new state seals the new secret the same way.
	e, err := open()
	if err != nil {
		t.Fatal(err)
	}
	next := *legacy
	next.ServiceSecretKey = strings.Repeat("f", 40)
	e.mu.Lock()
	err = e.saveStateLocked(&next)
	e.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if e2, err := open(); err != nil || e2.state.Load().ServiceSecretKey != next.ServiceSecretKey {
		t.Fatalf("after a save: %v", err)
	}
	// The sealed secret gone: a clear refusal.
	k, _ := secrets.SealedValue(servicePurpose, "")
	b = m.NewBatch()
	b.Delete(k)
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	if _, err := open(); err == nil || !strings.Contains(err.Error(), "service credential's secret is missing") {
		t.Fatalf("start without the sealed secret: %v", err)
	}
}
