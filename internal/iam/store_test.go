package iam

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/iam/policy"
	"github.com/twinlake/twinlake/internal/meta"
)

var testRoot = Credential{AccessKey: "rootuser", SecretKey: "rootsecret123"}

func openTest(t *testing.T, db meta.Store, now func() time.Time) *Store {
	t.Helper()
	s, err := Open(db, testRoot, Config{SiteID: "site-a", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStoreUsersGroupsPolicies(t *testing.T) {
	ctx := context.Background()
	db := meta.NewMem()
	s := openTest(t, db, nil)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.AddUser(ctx, "alice", "alicesecret"))
	must(s.AddUser(ctx, "bob", "bobsecret1"))
	if sk, ok := s.SecretKey("alice"); !ok || sk != "alicesecret" {
		t.Fatalf("SecretKey(alice) = %q, %v", sk, ok)
	}
	readB := []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}`)
	must(s.PutPolicy(ctx, "read-b", readB))
	must(s.AddGroupMembers(ctx, "team", []string{"alice"}))
	must(s.Attach(ctx, Entity{Group: "team"}, []string{"read-b"}))
	must(s.Attach(ctx, Entity{User: "bob"}, []string{"readwrite"}))

	get := &policy.Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k"}
	alice, _ := s.Identity("alice")
	if !alice.Allowed(get) {
		t.Fatal("alice cannot read b through her group")
	}
	must(s.SetGroupEnabled(ctx, "team", false))
	alice, _ = s.Identity("alice")
	if alice.Allowed(&policy.Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k"}) {
		t.Fatal("disabled group's policy still applies")
	}
	must(s.SetGroupEnabled(ctx, "team", true))

	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"duplicate user", s.AddUser(ctx, "alice", "whatever1"), ErrUserExists},
		{"root name", s.AddUser(ctx, "rootuser", "whatever1"), ErrInvalidName},
		{"short secret", s.AddUser(ctx, "carol", "short"), ErrWeakSecret},
		{"remove attached", s.RemovePolicy(ctx, "read-b"), ErrPolicyAttached},
		{"attach missing", s.Attach(ctx, Entity{User: "bob"}, []string{"nope"}), ErrNoSuchPolicy},
		{"attach to missing user", s.Attach(ctx, Entity{User: "nobody"}, []string{"readonly"}), ErrNoSuchUser},
		{"bad policy", s.PutPolicy(ctx, "bad", []byte(`{"Statement":[{"Effect":"Allow","Action":"s3:Nope","Resource":"*"}]}`)), policy.ErrInvalidPolicy},
		{"builtin", s.PutPolicy(ctx, "readonly", readB), ErrBuiltinPolicy},
		{"group not empty", s.RemoveGroupMembers(ctx, "team", nil), ErrGroupNotEmpty},
		{"detach not attached", s.Detach(ctx, Entity{User: "bob"}, []string{"readonly"}), ErrPolicyNotAttached},
		{"key for missing user", func() error { _, err := s.CreateAccessKey(ctx, "nobody", AccessKeyOptions{}); return err }(), ErrNoSuchUser},
		{"key expiry past", func() error {
			_, err := s.CreateAccessKey(ctx, "alice", AccessKeyOptions{Expiry: time.Now().Add(-time.Hour)})
			return err
		}(), ErrInvalidExpiry},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, c.err, c.want)
		}
	}
	if _, ok := s.SecretKey("carol"); ok {
		t.Fatal("refused user was created")
	}
	if e := s.Entities(); len(e) != 2 || e[0].Policy != "read-b" || e[0].Groups[0] != "team" || e[1].Users[0] != "bob" {
		t.Fatalf("Entities = %+v", e)
	}

	must(s.SetUserEnabled(ctx, "alice", false))
	if _, ok := s.SecretKey("alice"); ok {
		t.Fatal("disabled user's secret found")
	}
	must(s.SetUserEnabled(ctx, "alice", true))

	// Reopen: everything survives, and no secret is stored in the clear.
	s2 := openTest(t, db, nil)
	if sk, ok := s2.SecretKey("bob"); !ok || sk != "bobsecret1" {
		t.Fatalf("after reopen SecretKey(bob) = %q, %v", sk, ok)
	}
	if u, err := s2.User("alice"); err != nil || u.Groups[0] != "team" || !u.Enabled {
		t.Fatalf("after reopen User(alice) = %+v, %v", u, err)
	}
	meta.Scan(db, nil, nil, func(k, v []byte) (bool, error) {
		for _, secret := range []string{"alicesecret", "bobsecret1"} {
			if bytes.Contains(v, []byte(secret)) {
				t.Errorf("record %s holds a secret in the clear", k)
			}
		}
		return true, nil
	})

	// Removing a user removes its keys and memberships, as tombstones.
	must(s.RemoveUser(ctx, "alice"))
	if g, _ := s.Group("team"); len(g.Members) != 0 {
		t.Fatalf("team members after rm = %v", g.Members)
	}
	raw, err := db.Get([]byte("iam/user/alice"))
	if err != nil || !bytes.Contains(raw, []byte(`"deleted":true`)) {
		t.Fatalf("no tombstone: %s %v", raw, err)
	}
	must(s.AddUser(ctx, "alice", "newsecret1"))

	// A changed root secret without the previous one: refused, not
	// silently served without its users (datakey_test.go has the rest).
	if _, err := Open(db, Credential{AccessKey: "rootuser", SecretKey: "another-root-secret"}, Config{}); !errors.Is(err, ErrRootChanged) {
		t.Fatalf("Open under another root = %v, want ErrRootChanged", err)
	}
}

func TestAccessKeys(t *testing.T) {
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
	sess := []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::metrics/*"}]}`)
	c, err := s.CreateAccessKey(ctx, "dash", AccessKeyOptions{SessionPolicy: sess, Expiry: now.Add(time.Hour), Name: "grafana"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.AccessKey) != 20 || len(c.SecretKey) < 30 {
		t.Fatalf("generated credential %q", c.AccessKey)
	}
	id, ok := s.Identity(c.AccessKey)
	if !ok || id.Username != "dash" {
		t.Fatalf("Identity = %+v, %v", id, ok)
	}
	if !id.Allowed(&policy.Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::metrics/x"}) ||
		id.Allowed(&policy.Request{Action: "s3:PutObject", Resource: "arn:aws:s3:::metrics/x"}) {
		t.Fatal("session policy does not narrow the key")
	}
	if err := s.SetAccessKeyEnabled(ctx, c.AccessKey, false); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.SecretKey(c.AccessKey); ok {
		t.Fatal("disabled key works")
	}
	s.SetAccessKeyEnabled(ctx, c.AccessKey, true)
	if err := s.SetUserEnabled(ctx, "dash", false); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.SecretKey(c.AccessKey); ok {
		t.Fatal("key of a disabled user works")
	}
	s.SetUserEnabled(ctx, "dash", true)
	now = now.Add(2 * time.Hour)
	if _, ok := s.SecretKey(c.AccessKey); ok {
		t.Fatal("expired key works")
	}
	if l := s.AccessKeys("dash"); len(l) != 1 || l[0].Name != "grafana" {
		t.Fatalf("AccessKeys = %+v", l)
	}
	if _, err := s.CreateAccessKey(ctx, "dash", AccessKeyOptions{AccessKey: "dash"}); !errors.Is(err, ErrUserExists) {
		t.Fatalf("key named like a user: %v", err)
	}
	rk, err := s.CreateAccessKey(ctx, "rootuser", AccessKeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := s.Identity(rk.AccessKey); !ok || !id.Allowed(&policy.Request{Action: "admin:CreateUser", Resource: "arn:aws:s3:::*"}) {
		t.Fatal("root's key lacks root's rights")
	}
	if err := s.RemoveUser(ctx, "dash"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AccessKey(c.AccessKey); !errors.Is(err, ErrNoSuchAccessKey) {
		t.Fatalf("key outlived its user: %v", err)
	}
}

func TestServiceCredential(t *testing.T) {
	s := NewStore(testRoot)
	s.SetService(Credential{AccessKey: "svc-key", SecretKey: "svc-secret"})
	if !s.IsService("svc-key") || s.IsService("rootuser") || s.IsAdmin("svc-key") || !s.IsAdmin("rootuser") {
		t.Fatal("service credential roles wrong")
	}
	s.SetService(Credential{})
	if _, ok := s.SecretKey("svc-key"); ok {
		t.Fatal("removed service credential still found")
	}
}

func TestUpdateAccessKey(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, meta.NewMem(), nil)
	if err := s.AddUser(ctx, "erin", "erinsecret"); err != nil {
		t.Fatal(err)
	}
	s.Attach(ctx, Entity{User: "erin"}, []string{"readwrite"})
	c, err := s.CreateAccessKey(ctx, "erin", AccessKeyOptions{Name: "old"})
	if err != nil {
		t.Fatal(err)
	}
	short, past := "short", time.Now().Add(-time.Minute)
	bad := []byte(`{"Statement":[{"Effect":"Allow","Action":"s3:Nope","Resource":"*"}]}`)
	for _, u := range []AccessKeyUpdate{{SecretKey: &short}, {Expiry: &past}, {SessionPolicy: &bad}} {
		if err := s.UpdateAccessKey(ctx, c.AccessKey, u); err == nil {
			t.Fatalf("update %+v accepted", u)
		}
	}
	secret, name := "a-new-secret", "new"
	sess := []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}`)
	if err := s.UpdateAccessKey(ctx, c.AccessKey, AccessKeyUpdate{SecretKey: &secret, Name: &name, SessionPolicy: &sess}); err != nil {
		t.Fatal(err)
	}
	if sk, _ := s.SecretKey(c.AccessKey); sk != secret {
		t.Fatal("secret not changed")
	}
	id, _ := s.Identity(c.AccessKey)
	if id.Allowed(&policy.Request{Action: "s3:PutObject", Resource: "arn:aws:s3:::b/k"}) {
		t.Fatal("new session policy not applied")
	}
	if k, _ := s.AccessKey(c.AccessKey); k.Name != "new" {
		t.Fatalf("name = %q", k.Name)
	}
	if err := s.UpdateAccessKey(ctx, "nope", AccessKeyUpdate{Name: &name}); !errors.Is(err, ErrNoSuchAccessKey) {
		t.Fatalf("missing key: %v", err)
	}
}

// TestRecordsReplicable pins what later per-item replication relies on:
// every write stamps a strictly increasing HLC time and the site, deletes
// leave tombstones, and last-writer-wins breaks time ties by site.
func TestRecordsReplicable(t *testing.T) {
	ctx := context.Background()
	db := meta.NewMem()
	s := openTest(t, db, nil)
	read := func(key string) Record {
		t.Helper()
		v, err := db.Get([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		r, err := decodeRecord([]byte(key), v)
		if err != nil {
			t.Fatal(err)
		}
		return *r
	}
	s.AddUser(ctx, "frank", "franksecret")
	r1 := read("iam/user/frank")
	s.SetUserEnabled(ctx, "frank", false)
	r2 := read("iam/user/frank")
	s.RemoveUser(ctx, "frank")
	r3 := read("iam/user/frank")
	if r1.Updated >= r2.Updated || r2.Updated >= r3.Updated || r1.Site != "site-a" || r1.Format != recordFmtV1 {
		t.Fatalf("stamps: %+v %+v %+v", r1, r2, r3)
	}
	if !r3.Deleted || r3.User != nil || !r3.Newer(&r2) || r1.Newer(&r3) {
		t.Fatalf("tombstone: %+v", r3)
	}
	a, b := Record{Updated: 5, Site: "a"}, Record{Updated: 5, Site: "b"}
	if !b.Newer(&a) || a.Newer(&b) {
		t.Fatal("tie not broken by site")
	}
}

// TestMemberships: each user maps to the live groups naming it, sorted and
// once each, whatever the records' order; a deleted group names no one.
func TestMemberships(t *testing.T) {
	group := func(name string, deleted bool, members ...string) *Record {
		r := &Record{Kind: KindGroup, Name: name, Deleted: deleted}
		if !deleted {
			r.Group = &GroupRecord{Members: members}
		}
		return r
	}
	recs := map[string]*Record{}
	for _, r := range []*Record{
		group("ops", false, "bob", "alice", "alice"),
		group("dev", false, "alice"),
		group("gone", true),
		group("empty", false),
		{Kind: KindUser, Name: "carol", User: &UserRecord{}},
	} {
		recs[recordKey(r.Kind, r.Name)] = r
	}
	got := memberships(recs)
	want := map[string][]string{"alice": {"dev", "ops"}, "bob": {"ops"}}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("memberships %v, want %v", got, want)
	}
}
