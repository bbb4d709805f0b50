package catalog

import (
	"sort"
	"time"

	"github.com/apache/iceberg-go/table"
)

// The decisions of table maintenance, as pure functions of the metadata,
// the clock and the policy, so that they can be tested without a server.

// expiryPlan is what a snapshot expiry removes.
type expiryPlan struct {
	expire []int64 // snapshot IDs, ascending
	kept   int
}

// planExpiry picks the snapshots an expiry removes, with Iceberg's
// semantics: every branch keeps its head, at least retainLast of its most
// recent ancestors, and every ancestor younger than maxAge (a ref's own
// min-snapshots-to-keep and max-snapshot-age-ms win over both); every tag
// keeps its snapshot; a snapshot on no branch's history expires once older
// than maxAge. The current snapshot is main's head, so it is never expired.
func planExpiry(md table.Metadata, now time.Time, maxAge time.Duration, retainLast int) expiryPlan {
	nowMS := now.UnixMilli()
	keep := map[int64]bool{}
	onBranch := map[int64]bool{}
	lookup := func(id int64) *table.Snapshot { return md.SnapshotByID(id) }
	for _, ref := range md.Refs() {
		keep[ref.SnapshotID] = true
		if ref.SnapshotRefType != table.BranchRef {
			onBranch[ref.SnapshotID] = true
			continue
		}
		minKeep, ageMS := retainLast, maxAge.Milliseconds()
		if ref.MinSnapshotsToKeep != nil {
			minKeep = *ref.MinSnapshotsToKeep
		}
		if ref.MaxSnapshotAgeMs != nil {
			ageMS = *ref.MaxSnapshotAgeMs
		}
		walking := true
		for i, s := range table.AncestorsOf(ref.SnapshotID, lookup) {
			onBranch[s.SnapshotID] = true
			if walking && (i < minKeep || nowMS-s.TimestampMs <= ageMS) {
				keep[s.SnapshotID] = true
				continue
			}
			walking = false
		}
	}
	if cur := md.CurrentSnapshot(); cur != nil {
		keep[cur.SnapshotID] = true
	}
	var plan expiryPlan
	for _, s := range md.Snapshots() {
		switch {
		case keep[s.SnapshotID]:
			plan.kept++
		case !onBranch[s.SnapshotID] && nowMS-s.TimestampMs <= maxAge.Milliseconds():
			plan.kept++
		default:
			plan.expire = append(plan.expire, s.SnapshotID)
		}
	}
	sort.Slice(plan.expire, func(i, j int) bool { return plan.expire[i] < plan.expire[j] })
	return plan
}

// refsUnchanged is the requirement of an expiry commit: the table's refs
// are exactly those the plan was made against. A concurrent commit that
// moved a branch or added a tag fails it, and the expiry is planned again
// (RemoveSnapshots would otherwise drop a new ref to an expired snapshot).
type refsUnchanged struct {
	uuid string
	refs map[string]table.SnapshotRef
}

func refsOf(md table.Metadata) map[string]table.SnapshotRef {
	out := map[string]table.SnapshotRef{}
	for name, ref := range md.Refs() {
		out[name] = ref
	}
	return out
}

// GetType implements table.Requirement; the type never goes on the wire.
func (r refsUnchanged) GetType() string { return "twinlake-assert-refs-unchanged" }

// Validate implements table.Requirement.
func (r refsUnchanged) Validate(md table.Metadata) error {
	if md == nil {
		return errRefsChanged
	}
	if md.TableUUID().String() != r.uuid {
		return errRefsChanged
	}
	now := refsOf(md)
	if len(now) != len(r.refs) {
		return errRefsChanged
	}
	for name, ref := range r.refs {
		cur, ok := now[name]
		if !ok || !cur.Equals(ref) {
			return errRefsChanged
		}
	}
	return nil
}

var _ table.Requirement = refsUnchanged{}

// removedMetadataFiles returns the metadata files a commit dropped from the
// metadata log (the previous current file included) that the new metadata
// no longer names: what write.metadata.delete-after-commit.enabled deletes.
func removedMetadataFiles(prevLocation string, prev, next table.Metadata, nextLocation string) []string {
	if prev == nil || next == nil {
		return nil
	}
	still := map[string]bool{objectName(nextLocation): true}
	for l := range next.PreviousFiles() {
		still[objectName(l.MetadataFile)] = true
	}
	var out []string
	cand := []string{prevLocation}
	for l := range prev.PreviousFiles() {
		cand = append(cand, l.MetadataFile)
	}
	for _, loc := range cand {
		if n := objectName(loc); n != "" && !still[n] {
			still[n] = true
			out = append(out, loc)
		}
	}
	return out
}

// orphanDue reports whether a file unreferenced by the table may be
// removed: it is older than the safety window, so that no writer can still
// be about to commit it.
func orphanDue(modTime, now time.Time, window time.Duration) bool {
	return now.Sub(modTime) > window
}
