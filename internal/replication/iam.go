package replication

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twinlake/twinlake/internal/iam"
	"github.com/twinlake/twinlake/internal/meta"
	"github.com/twinlake/twinlake/internal/objects"
)

// IAM replication: users, groups, policies, attachments and access keys
// travel as whole records (iam.Transfer), one journal entry (OpIAM) per
// record and peer, written in the batch that commits the record. The
// receiver keeps the record with the later HLC time, then the greater
// origin site, tombstones included, so every site converges on the same
// record and a deletion is never undone by an older update. A record's
// secret is sealed with each site's own key: it travels in the clear only
// inside the signed peer call's body and is sealed again on arrival.

// IAMStore is the site's identity store as the engine reaches it
// (*iam.Store).
type IAMStore interface {
	SetReplicator(r iam.Replicator)
	// Refs lists every record, tombstones included.
	Refs() []iam.Ref
	// LiveRecords counts the records that are not tombstones.
	LiveRecords() int
	// Export returns a record as it is now, its secret opened.
	Export(kind, name string) (iam.Transfer, bool, error)
	// Apply stores a peer's record by last-writer-wins, without calling
	// the Replicator.
	Apply(ctx context.Context, t iam.Transfer) (iam.Outcome, error)
}

var (
	_ IAMStore       = (*iam.Store)(nil)
	_ iam.Replicator = (*Engine)(nil)
)

// IAMPeer is the optional capability of a Peer that takes IAM records
// (probed with a type assertion).
type IAMPeer interface {
	// SendIAM delivers one record (a tombstone for a deletion). The
	// secret in t must travel only inside the call's body.
	SendIAM(ctx context.Context, t iam.Transfer) (objects.ApplyOutcome, error)
}

// OpIAM sends an IAM record; Entry.Key is "<kind>/<name>".
const OpIAM = "iam"

// AttachIAM makes the engine replicate store's records: it installs the
// engine as the store's Replicator and applies what peers send to it.
// Call it before Start.
func (e *Engine) AttachIAM(store IAMStore) {
	e.iam = store
	store.SetReplicator(e)
}

// IAM implements iam.Replicator: it journals the record for every peer.
func (e *Engine) IAM(b meta.Batch, kind, name string, at int64) {
	now := time.Now().UnixNano()
	for _, t := range *e.targets.Load() {
		t.journal(b, iamEntry(kind, name, at, now))
	}
}

func iamEntry(kind, name string, at, queued int64) Entry {
	return Entry{Op: OpIAM, Key: kind + "/" + name, At: at, Queued: queued}
}

// queueIAM journals every IAM record, tombstones included, for one peer
// (a new peer after a join, or a resync).
func (e *Engine) queueIAM(t *target) (int, error) {
	if e.iam == nil {
		return 0, nil
	}
	refs := e.iam.Refs()
	if len(refs) == 0 {
		return 0, nil
	}
	b := e.cfg.Meta.NewBatch()
	now := time.Now().UnixNano()
	for _, r := range refs {
		t.journal(b, iamEntry(r.Kind, r.Name, r.Updated, now))
	}
	if err := b.Commit(true); err != nil {
		return 0, err
	}
	t.wakeUp()
	return len(refs), nil
}

// sendIAM delivers the record an OpIAM entry names, as it is now. A peer
// that does not take IAM records (an older build) fails with
// ErrUnsupported: the work stays where it is, held back by the target's
// IAM gate (iamgate.go) without spending a retry, until the peer is
// upgraded, while the rest of replication to it goes on.
func (t *target) sendIAM(ctx context.Context, en Entry) (objects.ApplyOutcome, error) {
	kind, name, _ := strings.Cut(en.Key, "/")
	if t.e.iam == nil {
		return objects.Duplicate, nil
	}
	rec, ok, err := t.e.iam.Export(kind, name)
	if err != nil {
		return 0, err
	}
	if !ok {
		return objects.Duplicate, nil
	}
	ip, ok := t.peer.(IAMPeer)
	if !ok {
		return 0, fmt.Errorf("%w: the peer client takes no IAM records", ErrUnsupported)
	}
	out, err := ip.SendIAM(ctx, rec)
	if err == nil {
		t.iamTaken()
	}
	return out, err
}

// ReceiveIAM applies an IAM record sent by a peer (last-writer-wins, see
// iam.Store.Apply).
func (e *Engine) ReceiveIAM(ctx context.Context, t iam.Transfer) (objects.ApplyOutcome, error) {
	start := time.Now()
	if e.iam == nil {
		return 0, fmt.Errorf("%w: this site keeps no IAM records", ErrInvalidRequest)
	}
	res, err := e.iam.Apply(ctx, t)
	if errors.Is(err, iam.ErrInvalidRecord) {
		err = fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	out := map[iam.Outcome]objects.ApplyOutcome{iam.Applied: objects.Applied, iam.Duplicate: objects.Duplicate, iam.Stale: objects.Stale}[res]
	e.received(out, 0, err)
	e.traceEvent("replication.ReceiveIAM", t.Site, "iam", t.Kind+"/"+t.Name, "iam "+t.Kind+" "+t.Name+" from "+t.Site+": "+out.String(), start, err)
	return out, err
}

// iamDigest summarises every IAM record's version (kind, name, time,
// origin, deletion), to compare them between sites.
func iamDigest(store IAMStore) string {
	if store == nil {
		return ""
	}
	h := sha256.New()
	for _, r := range store.Refs() {
		h.Write([]byte(r.Kind + "/" + r.Name + "\x00" + strconv.FormatInt(r.Updated, 10) + "\x00" + r.Site + "\x00" + strconv.FormatBool(r.Deleted) + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}
