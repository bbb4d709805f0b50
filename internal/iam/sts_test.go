package iam

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/iam/policy"
	"github.com/twinlake/twinlake/internal/meta"
)

// TestAssumeRole checks sessions in the store: a session of an access key
// is narrowed by the key's session policy and the inline policy both, never
// outlasts the key, is bound to its access key and to the issuing site's
// root secret, expires, and follows its parent's status.
func TestAssumeRole(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := openTest(t, meta.NewMem(), clock)
	if err := s.AddUser(ctx, "dash", "dashsecret"); err != nil {
		t.Fatal(err)
	}
	if err := s.Attach(ctx, Entity{User: "dash"}, []string{"readwrite"}); err != nil {
		t.Fatal(err)
	}
	keyPol := []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::metrics/*"}]}`)
	key, err := s.CreateAccessKey(ctx, "dash", AccessKeyOptions{SessionPolicy: keyPol, Expiry: now.Add(30 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	inline := []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","s3:DeleteObject"],"Resource":"*"}]}`)
	c, err := s.AssumeRole(key.AccessKey, time.Hour, inline)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Expiration.Equal(now.Add(30 * time.Minute)) {
		t.Fatalf("expiration %s outlasts the parent key", c.Expiration)
	}
	if _, ok := s.SecretKey(c.AccessKey); ok {
		t.Fatal("temporary key found without its token")
	}
	if sk, expired, ok := s.SessionSecretKey(c.AccessKey, c.SessionToken); !ok || expired || sk != c.SecretKey {
		t.Fatalf("SessionSecretKey = %q %v %v", sk, expired, ok)
	}
	id, ok := s.Identity(c.AccessKey)
	if !ok || id.Username != "dash" || id.Parent != key.AccessKey {
		t.Fatalf("Identity = %+v %v", id, ok)
	}
	for _, tc := range []struct {
		action, resource string
		want             bool
	}{
		{"s3:GetObject", "arn:aws:s3:::metrics/x", true},
		{"s3:PutObject", "arn:aws:s3:::metrics/x", false},    // not in the inline policy
		{"s3:DeleteObject", "arn:aws:s3:::metrics/x", false}, // not in the key's policy
		{"s3:GetObject", "arn:aws:s3:::other/x", false},
	} {
		if got := s.Authorize(c.AccessKey, nil, &policy.Request{Action: tc.action, Resource: tc.resource}); got != tc.want {
			t.Errorf("%s %s = %v, want %v", tc.action, tc.resource, got, tc.want)
		}
	}

	// Bound to its key, to this site's root secret, and no chaining.
	other, _ := s.AssumeRole("dash", MinSessionDuration, nil)
	if _, _, ok := s.SessionSecretKey(other.AccessKey, c.SessionToken); ok {
		t.Fatal("a token opened for another access key")
	}
	site2 := NewStore(Credential{AccessKey: testRoot.AccessKey, SecretKey: "another-root-secret"})
	if _, _, ok := site2.SessionSecretKey(c.AccessKey, c.SessionToken); ok {
		t.Fatal("a token opened under another root secret")
	}
	if _, err := s.AssumeRole(c.AccessKey, time.Hour, nil); !errors.Is(err, ErrSessionDenied) {
		t.Fatalf("chained AssumeRole: %v", err)
	}
	for _, d := range []time.Duration{MinSessionDuration - time.Second, MaxSessionDuration + time.Second} {
		if _, err := s.AssumeRole("dash", d, nil); !errors.Is(err, ErrSessionDuration) {
			t.Fatalf("duration %s: %v", d, err)
		}
	}

	// The parent's status is read on every lookup.
	if err := s.SetUserEnabled(ctx, "dash", false); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := s.SessionSecretKey(other.AccessKey, other.SessionToken); ok {
		t.Fatal("session of a disabled user works")
	}
	if _, ok := s.Identity(other.AccessKey); ok {
		t.Fatal("identity of a disabled user's session")
	}
	s.SetUserEnabled(ctx, "dash", true)
	if _, _, ok := s.SessionSecretKey(other.AccessKey, other.SessionToken); !ok {
		t.Fatal("session not restored with its parent")
	}
	now = now.Add(MinSessionDuration)
	if _, expired, ok := s.SessionSecretKey(other.AccessKey, other.SessionToken); ok || !expired {
		t.Fatal("expired session works")
	}
	if _, ok := s.Identity(other.AccessKey); ok {
		t.Fatal("identity of an expired session")
	}
}

// TestVendCredentials checks the catalog's vended sessions: their rights
// are the scope alone (the parent has no s3 rights), a temporary caller
// vends under its parent, and disabling the parent revokes them.
func TestVendCredentials(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := openTest(t, meta.NewMem(), func() time.Time { return now })
	if err := s.AddUser(ctx, "vic", "vicsecret1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Attach(ctx, Entity{User: "vic"}, []string{"tablesReadOnly"}); err != nil {
		t.Fatal(err)
	}
	scope := []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject"],"Resource":"arn:aws:s3:::lake/t/*"}]}`)
	if _, err := s.VendCredentials("vic", time.Hour, nil); !errors.Is(err, ErrSessionDenied) {
		t.Fatalf("vend without scope: %v", err)
	}
	tmp, err := s.AssumeRole("vic", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.SessionSecretKey(tmp.AccessKey, tmp.SessionToken)
	for _, caller := range []string{"vic", tmp.AccessKey} {
		c, err := s.VendCredentials(caller, time.Hour, scope)
		if err != nil {
			t.Fatalf("vend for %s: %v", caller, err)
		}
		if _, _, ok := s.SessionSecretKey(c.AccessKey, c.SessionToken); !ok {
			t.Fatalf("vended token for %s does not open", caller)
		}
		for res, want := range map[string]bool{"arn:aws:s3:::lake/t/x": true, "arn:aws:s3:::lake/u/x": false} {
			if got := s.Authorize(c.AccessKey, nil, &policy.Request{Action: "s3:GetObject", Resource: res}); got != want {
				t.Errorf("%s: GetObject %s = %v, want %v", caller, res, got, want)
			}
		}
		if s.Authorize(c.AccessKey, nil, &policy.Request{Action: "s3tables:GetTable", Resource: "arn:aws:s3tables:::bucket/lake"}) {
			t.Errorf("%s: vended credential has the parent's s3tables rights", caller)
		}
	}
	c, _ := s.VendCredentials("vic", time.Hour, scope)
	s.SessionSecretKey(c.AccessKey, c.SessionToken)
	if err := s.SetUserEnabled(ctx, "vic", false); err != nil {
		t.Fatal(err)
	}
	if s.Authorize(c.AccessKey, nil, &policy.Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::lake/t/x"}) {
		t.Error("vended credential works after its parent was disabled")
	}
}
