package rest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// Table ETags and the snapshots=refs representation of loadTable.
//
// An ETag names one representation of one metadata file: the metadata
// location (unique per commit) and the snapshots mode, so that the `all` and
// `refs` bodies of one version never share a tag, as the spec asks.

// Values of loadTable's snapshots query parameter.
const (
	snapshotsAll  = "all"
	snapshotsRefs = "refs"
)

// etag returns the strong ETag of a metadata file in a snapshots mode.
func etag(metadataLocation, mode string) string {
	sum := sha256.Sum256([]byte(mode + "\x00" + metadataLocation))
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// snapshotsMode reads the snapshots query parameter (default all).
func snapshotsMode(r *http.Request) (string, error) {
	switch v := r.URL.Query().Get("snapshots"); v {
	case "", snapshotsAll:
		return snapshotsAll, nil
	case snapshotsRefs:
		return snapshotsRefs, nil
	default:
		return "", fmt.Errorf("%w: snapshots=%q: want all or refs", errBadRequest, v)
	}
}

// noneMatch reports whether an If-None-Match header names tag (or is *).
func noneMatch(header, tag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == tag {
			return true
		}
	}
	return false
}

// refsOnly returns table metadata JSON whose snapshots are only those a
// branch or tag (or the current snapshot) points to. The snapshot log is
// kept: clients that need every snapshot load with snapshots=all.
func refsOnly(metadata []byte) ([]byte, error) {
	var md map[string]json.RawMessage
	if err := json.Unmarshal(metadata, &md); err != nil {
		return nil, fmt.Errorf("rest: decode table metadata: %w", err)
	}
	raw, ok := md["snapshots"]
	if !ok {
		return metadata, nil
	}
	var refs map[string]struct {
		SnapshotID int64 `json:"snapshot-id"`
	}
	if r, ok := md["refs"]; ok {
		if err := json.Unmarshal(r, &refs); err != nil {
			return nil, fmt.Errorf("rest: decode table refs: %w", err)
		}
	}
	keep := make(map[int64]bool, len(refs)+1)
	for _, ref := range refs {
		keep[ref.SnapshotID] = true
	}
	if cur, ok := md["current-snapshot-id"]; ok {
		var id *int64
		if err := json.Unmarshal(cur, &id); err == nil && id != nil {
			keep[*id] = true
		}
	}
	var snaps []json.RawMessage
	if err := json.Unmarshal(raw, &snaps); err != nil {
		return nil, fmt.Errorf("rest: decode table snapshots: %w", err)
	}
	kept := make([]json.RawMessage, 0, len(keep))
	for _, s := range snaps {
		var head struct {
			SnapshotID int64 `json:"snapshot-id"`
		}
		if err := json.Unmarshal(s, &head); err != nil {
			return nil, fmt.Errorf("rest: decode table snapshot: %w", err)
		}
		if keep[head.SnapshotID] {
			kept = append(kept, s)
		}
	}
	if len(kept) == len(snaps) {
		return metadata, nil
	}
	data, err := json.Marshal(kept)
	if err != nil {
		return nil, err
	}
	md["snapshots"] = data
	return json.Marshal(md)
}

// refsCache keeps the snapshots=refs metadata of recently loaded metadata
// files (immutable, so keyed by location): filtering a table of 10,000
// snapshots costs more than sending them all. Bounded; when full an
// arbitrary entry goes.
type refsCache struct {
	mu  sync.Mutex
	max int
	m   map[string][]byte
}

func newRefsCache(max int) *refsCache { return &refsCache{max: max, m: map[string][]byte{}} }

// get returns the refs-only metadata of the file at location.
func (rc *refsCache) get(location string, metadata []byte) ([]byte, error) {
	rc.mu.Lock()
	data, ok := rc.m[location]
	rc.mu.Unlock()
	if ok {
		return data, nil
	}
	data, err := refsOnly(metadata)
	if err != nil {
		return nil, err
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.m) >= rc.max {
		for k := range rc.m {
			delete(rc.m, k)
			break
		}
	}
	rc.m[location] = data
	return data, nil
}
