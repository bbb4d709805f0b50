package catalog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"

	"github.com/twinlake/twinlake/internal/objects"
)

// Idempotency keys replicate with the catalog: every answer kept in the
// meta store (idempotency.go) is also written into the warehouse bucket,
// under the reserved prefix, so that site replication carries it to the DR
// site exactly as it carries the identity records:
//
//	.twinlake/idempotency/<sha256 of the key, hex>.json   {"key": ..., answer}
//
// The Applied mark is written in the mutation's own commit, next to its
// identity record and before the commit point, so the DR site holds the
// mark whenever it can hold the change. A key the local store lacks is
// looked up there: after a failover, a client whose commit landed on the
// old primary just before it failed, retrying with the same key on the
// promoted site, gets the original answer and no second commit. A commit's
// answer (one table or several) is honoured only if the promoted site's
// catalog reached every version it names; other answers are not honoured
// there (see answerHolds); otherwise the change did not survive the failover and
// the retry runs. Expired answers are deleted from the bucket by the
// sweep, and the deletes replicate too.

// IdempotencyPrefix is the warehouse key prefix of replicated answers.
const IdempotencyPrefix = ReservedPrefix + "idempotency/"

// replicatedAnswer is the object of one key.
type replicatedAnswer struct {
	Key string `json:"key"`
	IdempotentAnswer
}

// idemObjectKey names a key's object: keys are opaque client tokens, so
// the name is their hash.
func idemObjectKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return IdempotencyPrefix + hex.EncodeToString(sum[:]) + ".json"
}

// putReplicated writes a key's answer into the warehouse bucket.
func (c *Catalog) putReplicated(ctx context.Context, wh, key string, a IdempotentAnswer) error {
	body, err := json.Marshal(replicatedAnswer{Key: key, IdempotentAnswer: a})
	if err != nil {
		return err
	}
	if _, err := c.obj.PutObject(ctx, wh, idemObjectKey(key), bytes.NewReader(body), objects.PutOptions{
		Size: int64(len(body)), ContentType: "application/json",
	}); err != nil {
		return fmt.Errorf("catalog: write idempotency answer: %w", err)
	}
	return nil
}

// replicatedIdempotent reads a key's answer from the warehouse bucket; ok
// is false when there is none, it expired, or the change it answers is not
// in this site's catalog.
func (c *Catalog) replicatedIdempotent(ctx context.Context, wh, key string) (IdempotentAnswer, bool, error) {
	data, err := c.readObject(ctx, wh, idemObjectKey(key))
	if errors.Is(err, objects.ErrObjectNotFound) || errors.Is(err, objects.ErrBucketNotFound) {
		return IdempotentAnswer{}, false, nil
	}
	if err != nil {
		return IdempotentAnswer{}, false, fmt.Errorf("catalog: read idempotency answer: %w", err)
	}
	var r replicatedAnswer
	if err := json.Unmarshal(data, &r); err != nil {
		return IdempotentAnswer{}, false, fmt.Errorf("catalog: decode idempotency answer: %w", err)
	}
	if r.Key != key || r.ExpiresMS <= c.nowMS() || !c.answerHolds(wh, r.IdempotentAnswer) {
		return IdempotentAnswer{}, false, nil
	}
	return r.IdempotentAnswer, true, nil
}

// answerHolds reports whether this site's catalog holds the change an
// answer recorded on another site stands for. A table answer names the
// table version, a multi-table commit's every table version: each must be
// here. Any other answer (a namespace or view change, a drop, a rename)
// names nothing this site could check, so it is not honoured here: the
// retry runs again, which for those operations cannot apply a change twice
// (a second create answers 409, a second drop or rename 404, properties
// set again are the same). Honouring it could tell a client a change
// happened that never reached this site.
func (c *Catalog) answerHolds(wh string, a IdempotentAnswer) bool {
	switch {
	case a.RefKind == KindTable && a.RefLocation != "":
		return c.versionHere(wh, a.RefLocation)
	case len(a.Tables) > 0:
		for _, l := range a.Tables {
			if !c.versionHere(wh, l) {
				return false
			}
		}
		return true
	}
	return false
}

// versionHere reports whether this site's catalog holds the table version
// whose metadata file is location: it is the current one of the table at
// its location, or in that table's metadata log (a later commit came after
// it). A version this site never had, or discarded (a catalog rebuild),
// is not here.
func (c *Catalog) versionHere(wh, location string) bool {
	a := IdempotentAnswer{RefLocation: location}
	key, err := keyInWarehouse(wh, a.RefLocation)
	if err != nil {
		return false
	}
	found, err := c.tablesAround(wh, path.Dir(path.Dir(key)))
	if err != nil {
		return false
	}
	want := objectName(a.RefLocation)
	for _, t := range found {
		e, err := c.getEntry(tableKind, wh, t.id)
		if err != nil {
			continue
		}
		if objectName(e.MetadataLocation) == want {
			return true
		}
		md, err := c.parsedTable(e)
		if err != nil {
			continue
		}
		for l := range md.PreviousFiles() {
			if objectName(l.MetadataFile) == want {
				return true
			}
		}
	}
	return false
}

// deleteReplicated removes the objects of swept keys; a failure is logged
// (the next sweep of an expired key does not see it again, but an expired
// object is never honoured).
func (c *Catalog) deleteReplicated(ctx context.Context, keys [][2]string) {
	for _, k := range keys {
		wh, key := k[0], idemObjectKey(k[1])
		if _, err := c.obj.HeadObject(ctx, wh, key, ""); err != nil {
			continue
		}
		if _, err := c.obj.DeleteObject(ctx, wh, key, ""); err != nil {
			c.log.Warn("delete expired idempotency answer", "warehouse", wh, "err", err)
		}
	}
}
