package iam

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/meta"
)

// snapshotDB copies every key and value of db, to prove a refused Open
// changed nothing.
func snapshotDB(t *testing.T, db meta.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := meta.Scan(db, nil, nil, func(k, v []byte) (bool, error) {
		out[string(k)] = string(v)
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameDB(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("%d keys before, %d after", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("%s changed", k)
		}
	}
}

func wantSecrets(t *testing.T, s *Store, want map[string]string) {
	t.Helper()
	for k, secret := range want {
		if got, ok := s.SecretKey(k); !ok || got != secret {
			t.Fatalf("SecretKey(%s) = %q, %v; want %q", k, got, ok, secret)
		}
	}
}

// TestRootRotation: secrets survive a change of the root password when the
// previous one is given once; a missing or wrong previous one is a clear
// refusal that changes nothing; after the rotation the old root password
// opens nothing, and the records keep their replication versions.
func TestRootRotation(t *testing.T) {
	ctx := context.Background()
	db := meta.NewMem()
	rootA := Credential{AccessKey: "rootuser", SecretKey: "root-password-A"}
	rootB := Credential{AccessKey: "rootuser", SecretKey: "root-password-B"}
	s, err := Open(db, rootA, Config{SiteID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddUser(ctx, "alice", "alicesecret"); err != nil {
		t.Fatal(err)
	}
	key, err := s.CreateAccessKey(ctx, "alice", AccessKeyOptions{AccessKey: "alicekey1", SecretKey: "alicekeysecret"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"alice": "alicesecret", key.AccessKey: "alicekeysecret"}
	refs := s.Refs()
	// A sealed value of another part of the site (the replication service
	// credential, say), written in that part's batch.
	vk, vv := s.SealedValue("test-purpose", "service-secret")
	b := db.NewBatch()
	b.Set(vk, vv)
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	wantSecrets(t, s, want)

	before := snapshotDB(t, db)
	for _, c := range []struct {
		name string
		prev []string
	}{{"no previous", nil}, {"wrong previous", []string{"not-the-password"}}, {"empty previous", []string{""}}} {
		_, err := Open(db, rootB, Config{PreviousRootSecrets: c.prev})
		if !errors.Is(err, ErrRootChanged) || !strings.Contains(err.Error(), "TWINLAKE_ROOT_PASSWORD_PREVIOUS") ||
			!strings.Contains(err.Error(), "nothing was changed") {
			t.Fatalf("%s: Open = %v, want a refusal naming the remedy", c.name, err)
		}
		if strings.Contains(err.Error(), "not-the-password") || strings.Contains(err.Error(), rootB.SecretKey) {
			t.Fatalf("%s: the refusal shows a password: %v", c.name, err)
		}
		sameDB(t, before, snapshotDB(t, db))
	}

	// The rotation: B with A as previous (among wrong ones).
	s, err = Open(db, rootB, Config{PreviousRootSecrets: []string{"not-the-password", rootA.SecretKey}})
	if err != nil {
		t.Fatal(err)
	}
	wantSecrets(t, s, want)
	if v, ok, err := s.OpenValue("test-purpose"); !ok || err != nil || v != "service-secret" {
		t.Fatalf("sealed value after the rotation: %q, %v, %v", v, ok, err)
	}
	if _, ok, err := s.OpenValue("other-purpose"); ok || err != nil {
		t.Fatalf("a value never stored: %v, %v", ok, err)
	}
	if got := s.Refs(); len(got) != len(refs) || got[0] != refs[0] || got[len(got)-1] != refs[len(refs)-1] {
		t.Fatalf("re-sealing changed the records' versions: %+v, want %+v", got, refs)
	}
	after := snapshotDB(t, db)
	if after[dataKeyKey] == before[dataKeyKey] || after["iam/user/alice"] == before["iam/user/alice"] {
		t.Fatal("the data key or the sealed secrets were not renewed")
	}
	for k, v := range after {
		if strings.Contains(v, "alicesecret") || strings.Contains(v, "alicekeysecret") || strings.Contains(v, "root-password") ||
			strings.Contains(v, "service-secret") {
			t.Fatalf("%s holds a secret in the clear", k)
		}
	}
	// New writes after the rotation, and a restart with B alone.
	if err := s.AddUser(ctx, "bob", "bobsecret1"); err != nil {
		t.Fatal(err)
	}
	want["bob"] = "bobsecret1"
	s, err = Open(db, rootB, Config{PreviousRootSecrets: []string{rootA.SecretKey}})
	if err != nil {
		t.Fatal(err)
	}
	wantSecrets(t, s, want)
	// The old root password now opens nothing: a copy of it is useless.
	if _, err := Open(db, rootA, Config{}); !errors.Is(err, ErrRootChanged) {
		t.Fatalf("Open with the old root = %v", err)
	}
	// Rotating back works the same way.
	if s, err = Open(db, rootA, Config{PreviousRootSecrets: []string{rootB.SecretKey}}); err != nil {
		t.Fatal(err)
	}
	wantSecrets(t, s, want)
}

// TestRootRotationWithKMS: with a KMS key configured, the data key is also
// wrapped under it and a root change needs no previous password; a changed
// KMS key with an unchanged root re-wraps; both changed is refused.
func TestRootRotationWithKMS(t *testing.T) {
	ctx := context.Background()
	db := meta.NewMem()
	kms := bytes.Repeat([]byte{7}, 32)
	kms2 := bytes.Repeat([]byte{9}, 32)
	rootA := Credential{AccessKey: "rootuser", SecretKey: "root-password-A"}
	rootB := Credential{AccessKey: "rootuser", SecretKey: "root-password-B"}
	rootC := Credential{AccessKey: "rootuser", SecretKey: "root-password-C"}
	s, err := Open(db, rootA, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddUser(ctx, "alice", "alicesecret"); err != nil {
		t.Fatal(err)
	}
	// The KMS key is added later: the same data key is wrapped under it.
	if s, err = Open(db, rootA, Config{KMSKey: kms}); err != nil {
		t.Fatal(err)
	}
	var rec dataKeyRecord
	raw, _ := db.Get([]byte(dataKeyKey))
	if json.Unmarshal(raw, &rec) != nil || len(rec.KMS) == 0 {
		t.Fatalf("no KMS wrap: %s", raw)
	}
	if s, err = Open(db, rootB, Config{KMSKey: kms}); err != nil {
		t.Fatal(err)
	}
	wantSecrets(t, s, map[string]string{"alice": "alicesecret"})
	if s, err = Open(db, rootB, Config{KMSKey: kms2}); err != nil {
		t.Fatal(err)
	}
	wantSecrets(t, s, map[string]string{"alice": "alicesecret"})
	before := snapshotDB(t, db)
	if _, err := Open(db, rootC, Config{KMSKey: kms}); !errors.Is(err, ErrRootChanged) || !strings.Contains(err.Error(), "the KMS key") {
		t.Fatalf("root and KMS key both changed: Open = %v", err)
	}
	sameDB(t, before, snapshotDB(t, db))
	if _, err := Open(db, rootB, Config{KMSKey: []byte("short")}); err == nil {
		t.Fatal("a KMS key of 5 bytes was taken")
	}
}

// TestLegacyConversion: a store whose secrets were sealed directly under
// the root-derived key (before the data key) is converted at its first
// open, also when the root changed at the same time and the previous one
// is given.
func TestLegacyConversion(t *testing.T) {
	for _, rotated := range []bool{false, true} {
		db := meta.NewMem()
		legacy, err := newSealer("root-password-A")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		for _, r := range []*Record{
			{Kind: KindUser, Name: "alice", User: &UserRecord{SealedSecret: legacy.seal("alicesecret", recordKey(KindUser, "alice")), Created: now}},
			{Kind: KindGroup, Name: "team", Group: &GroupRecord{Members: []string{"alice"}, Created: now}},
		} {
			r.Format, r.Updated, r.Site = recordFmtV1, now.UnixNano(), "s"
			data, _ := json.Marshal(r)
			b := db.NewBatch()
			b.Set([]byte(recordKey(r.Kind, r.Name)), data)
			if err := b.Commit(true); err != nil {
				t.Fatal(err)
			}
		}
		root := Credential{AccessKey: "rootuser", SecretKey: "root-password-A"}
		var prev []string
		if rotated {
			if _, err := Open(db, Credential{AccessKey: "rootuser", SecretKey: "root-password-B"}, Config{}); !errors.Is(err, ErrRootChanged) {
				t.Fatalf("legacy store under another root: %v", err)
			}
			root.SecretKey, prev = "root-password-B", []string{"root-password-A"}
		}
		s, err := Open(db, root, Config{PreviousRootSecrets: prev})
		if err != nil {
			t.Fatal(err)
		}
		wantSecrets(t, s, map[string]string{"alice": "alicesecret"})
		if s, err = Open(db, root, Config{}); err != nil {
			t.Fatal(err)
		}
		wantSecrets(t, s, map[string]string{"alice": "alicesecret"})
	}
}
