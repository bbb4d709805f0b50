package console

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// verifiedTimes remembers when each verified table or view version was
// committed (its metadata's last-updated-ms, or a view version's
// timestamp-ms), read from the replica's own catalog as the user. A
// version's metadata never changes, so each is loaded once: a poll of the
// Tables DR page loads only versions it has not seen.
type verifiedTimes struct {
	mu sync.Mutex
	m  map[verifiedKey]time.Time
}

type verifiedKey struct {
	entry   string // warehouse/namespace/name/kind
	version int64
}

// maxVerifiedTimes bounds the cache; past it the cache starts over.
const maxVerifiedTimes = 50000

func entryKey(e adminclient.TablesEntryStatus) string {
	return e.Warehouse + "/" + strings.Join(e.Namespace, "\x1f") + "/" + e.Name + "/" + e.Kind
}

// ages returns, per entry of the page (entryKey), when its verified
// version was committed. Entries whose metadata the user may not load, or
// that moved on meanwhile, are left out.
func (c *Console) ages(cl *call, entries []adminclient.TablesEntryStatus) map[string]time.Time {
	out := map[string]time.Time{}
	var todo []adminclient.TablesEntryStatus
	c.verified.mu.Lock()
	for _, e := range entries {
		if e.Verified < 0 {
			continue
		}
		if t, ok := c.verified.m[verifiedKey{entryKey(e), e.Verified}]; ok {
			out[entryKey(e)] = t
		} else {
			todo = append(todo, e)
		}
	}
	c.verified.mu.Unlock()
	if len(todo) == 0 {
		return out
	}
	ctx, cancel := context.WithTimeout(cl.ctx, 3*time.Second)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan adminclient.TablesEntryStatus)
	for range min(4, len(todo)) {
		wg.Go(func() {
			for e := range work {
				t, ok := verifiedAt(ctx, cl, e)
				if !ok {
					continue
				}
				mu.Lock()
				out[entryKey(e)] = t
				mu.Unlock()
				c.verified.mu.Lock()
				if len(c.verified.m) >= maxVerifiedTimes {
					c.verified.m = map[verifiedKey]time.Time{}
				}
				c.verified.m[verifiedKey{entryKey(e), e.Verified}] = t
				c.verified.mu.Unlock()
			}
		})
	}
	for _, e := range todo {
		work <- e
	}
	close(work)
	wg.Wait()
	return out
}

// verifiedAt loads the version the replica serves and returns its commit
// time, if it is still version e.Verified.
func verifiedAt(ctx context.Context, cl *call, e adminclient.TablesEntryStatus) (time.Time, bool) {
	cat, err := cl.cl.catalog(e.Warehouse)
	if err != nil {
		return time.Time{}, false
	}
	id := adminclient.CatalogIdent{Namespace: e.Namespace, Name: e.Name}
	var res adminclient.CatalogLoadResult
	if e.Kind == "view" {
		res, err = cat.LoadView(ctx, id)
	} else {
		res, err = cat.LoadTable(ctx, id)
	}
	if err != nil || metadataVersion(res.MetadataLocation) != e.Verified {
		return time.Time{}, false
	}
	var md struct {
		LastUpdated      int64 `json:"last-updated-ms"`
		CurrentVersionID int   `json:"current-version-id"`
		Versions         []struct {
			VersionID int   `json:"version-id"`
			Timestamp int64 `json:"timestamp-ms"`
		} `json:"versions"`
	}
	if json.Unmarshal(res.Metadata, &md) != nil {
		return time.Time{}, false
	}
	ms := md.LastUpdated
	for _, v := range md.Versions {
		if e.Kind == "view" && v.VersionID == md.CurrentVersionID {
			ms = v.Timestamp
		}
	}
	if ms <= 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(ms).UTC(), true
}

// metadataVersion reads the version of a metadata file name
// (…/00002-uuid.metadata.json is 2); -1 when it has none.
func metadataVersion(loc string) int64 {
	var v int64
	if _, err := fmt.Sscanf(path.Base(loc), "%d-", &v); err != nil {
		return -1
	}
	return v
}
