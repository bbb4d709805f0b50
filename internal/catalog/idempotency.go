package catalog

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twinlake/twinlake/internal/meta"
)

// Idempotency keys (the REST spec's Idempotency-Key header). For every
// mutation sent with a key, the catalog keeps the final answer for the
// advertised lifetime, so that a retry is answered without a second
// application:
//
//	c/k/<warehouse>\0<key>                        IdempotentAnswer (JSON)
//	c/x/<expiry ms, 8 bytes big-endian><warehouse>\0<key>  expiry index, empty value
//
// A mutation made with a key carries the key in its context
// (WithIdempotencyKey); the meta batch that applies it also writes an
// Applied answer for the key, so that a crash between the commit and the
// recording of the final answer still prevents a second application. The
// REST edge then overwrites it with the final answer (RecordIdempotent).
// Expired answers are swept a few at a time by every recording, so the store
// holds at most what one lifetime of keyed mutations wrote.

const (
	pfxIdempotency = "c/k/"
	pfxIdemExpiry  = "c/x/"
	// idemSweepBatch bounds the expired answers one recording removes.
	idemSweepBatch = 64
	// MaxIdempotencyKeyBytes bounds an Idempotency-Key (the spec's is a
	// 36-character UUID).
	MaxIdempotencyKeyBytes = 128
)

// IdempotentAnswer is the recorded outcome of a keyed mutation.
type IdempotentAnswer struct {
	// Op fingerprints the request (method, path, body hash); a retry whose
	// fingerprint differs is a different operation reusing the key.
	Op string `json:"op"`
	// Status is the HTTP status answered; 0 with Applied.
	Status int `json:"st,omitempty"`
	// Header holds the response headers worth replaying (Content-Type, ETag).
	Header map[string]string `json:"h,omitempty"`
	// Body is the response body, unless Ref stands for it.
	Body []byte `json:"b,omitempty"`
	// RefKind and RefLocation name the metadata file (table or view) whose
	// bytes are the answer's metadata: a load result is replayed by reading
	// it, so that the store does not hold a copy of every table's metadata.
	RefKind     string `json:"rk,omitempty"`
	RefLocation string `json:"rl,omitempty"`
	// Tables are the metadata files a multi-table commit wrote, one per
	// table: another site honours the answer only once it holds them all.
	Tables []string `json:"tl,omitempty"`
	// Applied marks an answer written by the mutation's own batch: the change
	// is durable but its final answer was not recorded (the server stopped in
	// between); the edge rebuilds the answer from Ref or the current state.
	Applied bool `json:"a,omitempty"`
	// ExpiresMS is when the answer may be forgotten, Unix milliseconds.
	ExpiresMS int64 `json:"x"`
}

type idemCtxKey struct{}

type idemMark struct{ wh, key, op string }

// WithIdempotencyKey returns a context whose mutations of warehouse wh
// record an Applied answer for key (with fingerprint op) in their own batch.
func WithIdempotencyKey(ctx context.Context, wh, key, op string) context.Context {
	return context.WithValue(ctx, idemCtxKey{}, idemMark{wh: wh, key: key, op: op})
}

// IdempotencyLifetime is how long answers are kept: the server advertises
// it as idempotency-key-lifetime.
func (c *Catalog) IdempotencyLifetime() time.Duration { return c.cfg.IdempotencyLifetime }

func idemKey(wh, key string) []byte { return []byte(pfxIdempotency + wh + "\x00" + key) }

func idemExpiryKey(expiresMS int64, wh, key string) []byte {
	k := make([]byte, 0, len(pfxIdemExpiry)+8+len(wh)+1+len(key))
	k = append(k, pfxIdemExpiry...)
	k = binary.BigEndian.AppendUint64(k, uint64(expiresMS))
	return append(append(append(k, wh...), 0), key...)
}

// markApplied adds to b the Applied answer of the keyed mutation ctx
// carries, if any. refKind and refLocation name the metadata file the
// answer's body is, or are empty.
func (c *Catalog) markApplied(ctx context.Context, b meta.Batch, wh, refKind, refLocation string) error {
	key, a, ok := c.appliedMark(ctx, wh, refKind, refLocation)
	if !ok {
		return nil
	}
	// The mark replicates with the change (idempotency_repl.go).
	if err := c.putReplicated(ctx, wh, key, a); err != nil {
		return err
	}
	return putIdempotent(b, wh, key, a)
}

// appliedMark returns the key and Applied answer of the keyed mutation ctx
// carries, if any (ok false: none, or one of another warehouse).
func (c *Catalog) appliedMark(ctx context.Context, wh, refKind, refLocation string) (string, IdempotentAnswer, bool) {
	m, ok := ctx.Value(idemCtxKey{}).(idemMark)
	if !ok || m.wh != wh {
		return "", IdempotentAnswer{}, false
	}
	return m.key, IdempotentAnswer{Op: m.op, Applied: true, RefKind: refKind, RefLocation: refLocation,
		ExpiresMS: c.cfg.Now().Add(c.cfg.IdempotencyLifetime).UnixMilli()}, true
}

func putIdempotent(b meta.Batch, wh, key string, a IdempotentAnswer) error {
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	b.Set(idemKey(wh, key), data)
	b.Set(idemExpiryKey(a.ExpiresMS, wh, key), []byte{})
	return nil
}

// Idempotent returns the answer recorded for key in warehouse wh, if one is
// recorded and not expired: from the meta store, or, when the key was
// recorded on another site (the primary before a failover), from the
// replicated answer in the warehouse bucket (idempotency_repl.go).
func (c *Catalog) Idempotent(ctx context.Context, wh, key string) (IdempotentAnswer, bool, error) {
	a, ok, err := c.localIdempotent(wh, key)
	if ok || err != nil {
		return a, ok, err
	}
	if _, err := c.meta.Get(idemKey(wh, key)); err == nil {
		return IdempotentAnswer{}, false, nil // recorded here and expired
	}
	return c.replicatedIdempotent(ctx, wh, key)
}

// localIdempotent is Idempotent from the meta store alone.
func (c *Catalog) localIdempotent(wh, key string) (IdempotentAnswer, bool, error) {
	v, err := c.meta.Get(idemKey(wh, key))
	if errors.Is(err, meta.ErrNotFound) {
		return IdempotentAnswer{}, false, nil
	}
	if err != nil {
		return IdempotentAnswer{}, false, err
	}
	var a IdempotentAnswer
	if err := json.Unmarshal(v, &a); err != nil {
		return IdempotentAnswer{}, false, fmt.Errorf("catalog: decode idempotency answer: %w", err)
	}
	if a.ExpiresMS <= c.nowMS() {
		return IdempotentAnswer{}, false, nil
	}
	return a, true, nil
}

// RecordIdempotent stores the final answer of a keyed mutation for the
// lifetime (replacing its Applied answer, whose expiry it keeps), writes
// it into the warehouse bucket so that it replicates (unless the
// replicated Applied mark already names the same metadata file, which
// replays the same answer), then sweeps a few expired answers. The caller
// serialises calls for one key.
func (c *Catalog) RecordIdempotent(ctx context.Context, wh, key string, a IdempotentAnswer) error {
	a.Applied = false
	a.ExpiresMS = c.cfg.Now().Add(c.cfg.IdempotencyLifetime).UnixMilli()
	prev, had, err := c.localIdempotent(wh, key)
	if err == nil && had {
		a.ExpiresMS = prev.ExpiresMS
		if a.RefLocation == "" && len(a.Tables) == 0 {
			a.Tables = prev.Tables // what the mutation's own mark knew it wrote
		}
	}
	b := c.meta.NewBatch()
	if err := putIdempotent(b, wh, key, a); err != nil {
		return err
	}
	swept, err := c.sweepIdempotent(b, wh, key)
	if err != nil {
		return err
	}
	if err := b.Commit(true); err != nil {
		c.idemSweep.rewind() // what it swept is still there
		return err
	}
	if !(had && prev.Applied && a.RefLocation != "" && prev.RefLocation == a.RefLocation) {
		if err := c.putReplicated(ctx, wh, key, a); err != nil {
			return err
		}
	}
	c.deleteReplicated(ctx, swept)
	return nil
}

// sweepIdempotent adds to b the removal of up to idemSweepBatch expired
// answers and their index keys, and returns the (warehouse, key) of the
// answers removed, whose replicated objects the caller deletes. An index
// key whose answer was rewritten with a later expiry, or is being recorded
// (keepWH, keepKey), is removed alone.
func (c *Catalog) sweepIdempotent(b meta.Batch, keepWH, keepKey string) (swept [][2]string, err error) {
	hi := binary.BigEndian.AppendUint64([]byte(pfxIdemExpiry), uint64(c.nowMS()))
	lo := c.idemSweep.start(c.cfg.Now(), []byte(pfxIdemExpiry))
	n := 0
	var last []byte
	err = meta.Scan(c.meta, lo, hi, func(k, _ []byte) (bool, error) {
		if n == idemSweepBatch {
			return false, nil
		}
		n++
		last = bytesClone(k)
		b.Delete(last)
		rest := k[len(pfxIdemExpiry)+8:]
		for i, ch := range rest {
			if ch == 0 {
				wh, key := string(rest[:i]), string(rest[i+1:])
				if wh == keepWH && key == keepKey {
					break
				}
				if _, ok, err := c.localIdempotent(wh, key); err == nil && !ok {
					b.Delete(idemKey(wh, key))
					swept = append(swept, [2]string{wh, key})
				}
				break
			}
		}
		return true, nil
	})
	if err == nil {
		if n < idemSweepBatch {
			c.idemSweep.advance(hi) // every key expired by now is removed
		} else {
			c.idemSweep.advance(append(last[:len(last):len(last)], 0)) // a copy: the batch holds last
		}
	}
	return swept, err
}

// sweepRestart bounds how long the sweep of expired idempotency answers
// goes on from its cursor before it starts again from the first: an
// answer indexed below the cursor after it passed (a batch whose commit
// failed, a replicated answer whose expiry came from a clock behind this
// one) is then swept too.
const sweepRestart = 10 * time.Minute

// sweepCursor is the key of the expiry index below which every answer was
// found expired and removed by an earlier sweep. The removed keys' tombstones
// stay in the store until compaction drops them, and a sweep starting from
// the index's first key would step over all of them at every keyed
// mutation: after 20,000 answers expired at once, a recording took about
// 5.5 ms instead of 0.4 until compaction caught up.
type sweepCursor struct {
	mu   sync.Mutex
	from []byte
	at   time.Time // when from last started again from the first key
}

// start is where a sweep at now begins: the cursor, or first when it is
// unset or older than sweepRestart.
func (s *sweepCursor) start(now time.Time, first []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.from == nil || now.Sub(s.at) > sweepRestart {
		s.from, s.at = first, now
	}
	return s.from
}

// advance moves the cursor up to k; it never moves back.
func (s *sweepCursor) advance(k []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes.Compare(k, s.from) > 0 {
		s.from = k
	}
}

// rewind makes the next sweep start from the first key.
func (s *sweepCursor) rewind() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.from = nil
}

func bytesClone(b []byte) []byte { return append([]byte(nil), b...) }

// ReadMetadataFile reads a metadata file of the warehouse (bounded by
// MaxMetadataBytes): the edge replays a recorded load result with it.
func (c *Catalog) ReadMetadataFile(ctx context.Context, wh, location string) ([]byte, error) {
	return c.readFile(ctx, wh, location)
}
