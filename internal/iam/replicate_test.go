package iam

import (
	"context"
	"errors"
	"testing"

	"github.com/twinlake/twinlake/internal/meta"
)

// recorder is a Replicator that counts what it is told.
type recorder struct{ changes []string }

func (r *recorder) IAM(_ meta.Batch, kind, name string, _ int64) {
	r.changes = append(r.changes, kind+"/"+name)
}
func (r *recorder) Committed() {}

func openSite(t *testing.T, site, rootSecret string) *Store {
	t.Helper()
	s, err := Open(meta.NewMem(), Credential{AccessKey: "rootuser", SecretKey: rootSecret}, Config{SiteID: site})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func userTransfer(name, secret string, updated int64, site string, disabled, deleted bool) Transfer {
	t := Transfer{Record: Record{Kind: KindUser, Name: name, Updated: updated, Site: site, Deleted: deleted}, Secret: secret}
	if !deleted {
		t.User = &UserRecord{Disabled: disabled}
	}
	return t
}

func TestApplyLastWriterWins(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		seq  []Transfer
		want []Outcome
		// the user's state at the end: "" absent, "on", "off"
		final string
	}{
		{"newer wins", []Transfer{userTransfer("alice", "secret-one", 10, "a", false, false), userTransfer("alice", "secret-one", 20, "b", true, false)},
			[]Outcome{Applied, Applied}, "off"},
		{"older loses", []Transfer{userTransfer("alice", "secret-one", 20, "a", true, false), userTransfer("alice", "secret-one", 10, "b", false, false)},
			[]Outcome{Applied, Stale}, "off"},
		{"tie broken by site", []Transfer{userTransfer("alice", "secret-one", 10, "b", true, false), userTransfer("alice", "secret-one", 10, "a", false, false)},
			[]Outcome{Applied, Stale}, "off"},
		{"tie greater site wins", []Transfer{userTransfer("alice", "secret-one", 10, "a", false, false), userTransfer("alice", "secret-one", 10, "b", true, false)},
			[]Outcome{Applied, Applied}, "off"},
		{"same version twice", []Transfer{userTransfer("alice", "secret-one", 10, "a", false, false), userTransfer("alice", "secret-one", 10, "a", false, false)},
			[]Outcome{Applied, Duplicate}, "on"},
		{"tombstone not resurrected", []Transfer{userTransfer("alice", "", 30, "a", false, true), userTransfer("alice", "secret-one", 20, "c", false, false)},
			[]Outcome{Applied, Stale}, ""},
		{"later update after delete wins", []Transfer{userTransfer("alice", "", 30, "a", false, true), userTransfer("alice", "secret-one", 40, "c", false, false)},
			[]Outcome{Applied, Applied}, "on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openSite(t, "x", "rootsecret-x")
			rec := &recorder{}
			s.SetReplicator(rec)
			for i, tr := range tc.seq {
				got, err := s.Apply(ctx, tr)
				if err != nil || got != tc.want[i] {
					t.Fatalf("apply %d: %v, %v; want %v", i, got, err, tc.want[i])
				}
			}
			if len(rec.changes) != 0 {
				t.Fatalf("applied records were reported to the replicator: %v", rec.changes)
			}
			u, err := s.User("alice")
			state := ""
			switch {
			case err == nil && u.Enabled:
				state = "on"
			case err == nil:
				state = "off"
			}
			if state != tc.final {
				t.Fatalf("final state %q, want %q", state, tc.final)
			}
		})
	}
}

// A secret exported from one site is sealed again with the receiver's key
// (the two root secrets differ) and signs there; a local change after an
// applied record is ordered after it and is reported for replication.
func TestApplyReseals(t *testing.T) {
	ctx := context.Background()
	a, b := openSite(t, "a", "rootsecret-a"), openSite(t, "b", "rootsecret-b")
	rec := &recorder{}
	a.SetReplicator(rec)
	if err := a.AddUser(ctx, "alice", "alice-secret"); err != nil {
		t.Fatal(err)
	}
	if len(rec.changes) != 1 || rec.changes[0] != "user/alice" {
		t.Fatalf("replicator told %v", rec.changes)
	}
	tr, ok, err := a.Export(KindUser, "alice")
	if err != nil || !ok || tr.Secret != "alice-secret" || tr.User.SealedSecret != nil {
		t.Fatalf("export: %+v %v %v", tr, ok, err)
	}
	if out, err := b.Apply(ctx, tr); err != nil || out != Applied {
		t.Fatalf("apply: %v %v", out, err)
	}
	if sk, ok := b.SecretKey("alice"); !ok || sk != "alice-secret" {
		t.Fatalf("b: SecretKey(alice) = %q, %v", sk, ok)
	}
	stored := b.load().records[recordKey(KindUser, "alice")]
	if _, err := a.seal.open(stored.User.SealedSecret, recordKey(KindUser, "alice")); err == nil {
		t.Fatal("b stored the secret sealed with a's key")
	}
	if err := b.SetUserEnabled(ctx, "alice", false); err != nil {
		t.Fatal(err)
	}
	if got := b.load().records[recordKey(KindUser, "alice")]; got.Updated <= tr.Updated || got.Site != "b" {
		t.Fatalf("local change after apply: updated %d site %s; applied %d", got.Updated, got.Site, tr.Updated)
	}
}

func TestApplyRefusesMalformed(t *testing.T) {
	s := openSite(t, "x", "rootsecret-x")
	for _, tr := range []Transfer{
		{Record: Record{Kind: "nope", Name: "alice", Updated: 1}},
		{Record: Record{Kind: KindUser, Name: "alice", Updated: 1, Group: &GroupRecord{}}, Secret: "s3cretsecret"},
		{Record: Record{Kind: KindUser, Name: "alice", Updated: 1, User: &UserRecord{}}},
		{Record: Record{Kind: KindUser, Name: "", Updated: 1, User: &UserRecord{}}, Secret: "s3cretsecret"},
	} {
		if _, err := s.Apply(context.Background(), tr); !errors.Is(err, ErrInvalidRecord) {
			t.Errorf("Apply(%+v) = %v, want ErrInvalidRecord", tr.Record, err)
		}
	}
	if s.LiveRecords() != 0 {
		t.Fatal("a refused record was stored")
	}
}
