package iam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/twinlake/twinlake/internal/meta"
)

// Replicator is told of every local IAM change inside the batch that
// commits it, so that the change and its outbound replication work are
// durable together (package replication implements it). Records applied
// from a peer (Apply) are not reported: no change travels back.
type Replicator interface {
	// IAM is called for each record written to b; at is its Updated time.
	IAM(b meta.Batch, kind, name string, at int64)
	// Committed is called after the batch committed.
	Committed()
}

// SetReplicator installs r (nil removes it). Call it before serving.
func (s *Store) SetReplicator(r Replicator) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repl = r
}

// Transfer is one record as it travels to another site: the record with
// its sealed secret removed and the secret in the clear in Secret (empty
// for records without one, and for tombstones). Secrets are sealed with a
// key derived from each site's own root secret, so a sealed secret means
// nothing elsewhere: the receiver seals Secret again with its own key. A
// Transfer must never be logged or stored as such.
type Transfer struct {
	Record
	Secret string
}

// Ref names one record and its version, without its payload.
type Ref struct {
	Kind, Name string
	Updated    int64
	Site       string
	Deleted    bool
}

// Outcome is what Apply did with a record.
type Outcome int

// Outcomes of Apply.
const (
	Applied   Outcome = iota // the record was newer and is stored
	Duplicate                // this version of the record is already stored
	Stale                    // a newer version (or a newer tombstone) is stored
)

// Refs lists every stored record (tombstones included), sorted by kind and
// name.
func (s *Store) Refs() []Ref {
	sn := s.load()
	out := make([]Ref, 0, len(sn.records))
	for _, r := range sn.records {
		out = append(out, Ref{Kind: r.Kind, Name: r.Name, Updated: r.Updated, Site: r.Site, Deleted: r.Deleted})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// LiveRecords counts the records that are not tombstones.
func (s *Store) LiveRecords() int {
	n := 0
	for _, r := range s.load().records {
		if !r.Deleted {
			n++
		}
	}
	return n
}

// Export returns the record kind/name as it is now, ready to send, with
// its secret opened. ok is false when there is no such record. It reads the
// store, not the snapshot: a record's journal entry commits with it, before
// the snapshot is rebuilt, and a sender may pick the entry up in between.
func (s *Store) Export(kind, name string) (t Transfer, ok bool, err error) {
	key := recordKey(kind, name)
	raw, err := s.db.Get([]byte(key))
	if errors.Is(err, meta.ErrNotFound) {
		return Transfer{}, false, nil
	}
	if err != nil {
		return Transfer{}, false, err
	}
	r, err := decodeRecord([]byte(key), raw)
	if err != nil {
		return Transfer{}, false, err
	}
	t.Record = *r
	aad := recordKey(kind, name)
	switch {
	case r.Deleted:
	case r.User != nil:
		u := *r.User
		if t.Secret, err = s.seal.open(u.SealedSecret, aad); err != nil {
			return Transfer{}, true, err
		}
		u.SealedSecret = nil
		t.User = &u
	case r.AccessKey != nil:
		ak := *r.AccessKey
		if t.Secret, err = s.seal.open(ak.SealedSecret, aad); err != nil {
			return Transfer{}, true, err
		}
		ak.SealedSecret = nil
		t.AccessKey = &ak
	}
	return t, true, nil
}

// Apply stores a record received from a peer unless the stored one wins
// under last-writer-wins (Record.Newer): the later Updated, then the
// greater origin Site. A tombstone is a record like any other, so a late
// update older than a deletion is Stale and never resurrects the item. The
// record keeps its Updated time and origin; the site's clock observes it,
// so a later local change is ordered after it. The Replicator is not
// called.
func (s *Store) Apply(ctx context.Context, t Transfer) (Outcome, error) {
	r := t.Record
	if err := checkTransfer(&r, t.Secret); err != nil {
		return 0, err
	}
	key := recordKey(r.Kind, r.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Clock.Observe(r.Updated)
	if old := s.load().records[key]; old != nil {
		if old.Updated == r.Updated && old.Site == r.Site {
			return Duplicate, nil
		}
		if !r.Newer(old) {
			return Stale, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	switch {
	case r.Deleted:
		r.User, r.Group, r.Policy, r.Mapping, r.AccessKey = nil, nil, nil, nil, nil
	case r.User != nil:
		u := *r.User
		u.SealedSecret = s.seal.seal(t.Secret, key)
		r.User = &u
	case r.AccessKey != nil:
		ak := *r.AccessKey
		ak.SealedSecret = s.seal.seal(t.Secret, key)
		r.AccessKey = &ak
	}
	r.Format = recordFmtV1
	data, err := json.Marshal(&r)
	if err != nil {
		return 0, err
	}
	b := s.db.NewBatch()
	b.Set([]byte(key), data)
	if err := b.Commit(true); err != nil {
		return 0, fmt.Errorf("iam: commit: %w", err)
	}
	return Applied, s.reload()
}

// payloadKinds names the payload each kind of record carries.
var payloadKinds = []string{KindUser, KindGroup, KindPolicy, KindUserMap, KindGroupMap, KindAccessKey}

// checkTransfer refuses a received record that could not have been
// written locally: an unknown kind, a bad name, a missing or mismatched
// payload, a missing secret.
func checkTransfer(r *Record, secret string) error {
	if !slices.Contains(payloadKinds, r.Kind) {
		return fmt.Errorf("%w: unknown record kind %q", ErrInvalidRecord, r.Kind)
	}
	if r.Name == "" || len(r.Name) > 256 || r.Updated <= 0 {
		return fmt.Errorf("%w: %s %q: bad name or time", ErrInvalidRecord, r.Kind, r.Name)
	}
	if r.Deleted {
		return nil
	}
	have := map[string]bool{KindUser: r.User != nil, KindGroup: r.Group != nil, KindPolicy: r.Policy != nil,
		KindUserMap: r.Mapping != nil, KindGroupMap: r.Mapping != nil, KindAccessKey: r.AccessKey != nil}
	n := 0
	for _, v := range []bool{r.User != nil, r.Group != nil, r.Policy != nil, r.Mapping != nil, r.AccessKey != nil} {
		if v {
			n++
		}
	}
	if n != 1 || !have[r.Kind] {
		return fmt.Errorf("%w: %s %q: payload does not match its kind", ErrInvalidRecord, r.Kind, r.Name)
	}
	if (r.Kind == KindUser || r.Kind == KindAccessKey) && secret == "" {
		return fmt.Errorf("%w: %s %q: no secret", ErrInvalidRecord, r.Kind, r.Name)
	}
	return nil
}
