package rest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"sync"

	"github.com/twinlake/twinlake/internal/catalog"
	"github.com/twinlake/twinlake/internal/httprec"
)

// The spec's Idempotency-Key contract: a mutation sent with a key is
// answered once; a retry with the key within the lifetime gets the recorded
// answer (2xx and deterministic 4xx, 409 included) without running again.
// 5xx answers are never recorded, so a retry after one runs again. The key
// store is the catalog's (internal/catalog/idempotency.go); the mutation's
// own meta batch marks the key applied, so a crash between the change and
// the recording cannot let the retry apply it twice.

const headerIdempotencyKey = "Idempotency-Key"

// maxRecordedBody bounds a response body kept verbatim; a larger one (a
// namespace with huge properties) is rebuilt from the current state.
const maxRecordedBody = 64 << 10

// keyLocks serialises requests carrying the same key, so that two
// concurrent retries cannot both run the mutation.
type keyLocks struct {
	seed  maphash.Seed
	locks [64]sync.Mutex
}

func (k *keyLocks) lock(wh, key string) func() {
	m := &k.locks[maphash.String(k.seed, wh+"\x00"+key)%uint64(len(k.locks))]
	m.Lock()
	return m.Unlock
}

// validIdempotencyKey accepts 1 to 128 visible ASCII characters (the spec
// asks for a UUIDv7; any opaque token a client sends is honoured).
func validIdempotencyKey(key string) error {
	if len(key) > catalog.MaxIdempotencyKeyBytes {
		return fmt.Errorf("%w: %s longer than %d bytes", errBadRequest, headerIdempotencyKey, catalog.MaxIdempotencyKeyBytes)
	}
	for i := 0; i < len(key); i++ {
		if key[i] <= 0x20 || key[i] >= 0x7f {
			return fmt.Errorf("%w: %s holds a character outside visible ASCII", errBadRequest, headerIdempotencyKey)
		}
	}
	return nil
}

// fingerprint identifies the operation a key was first used for.
func fingerprint(r *http.Request, body []byte) string {
	sum := sha256.Sum256(body)
	return r.Method + " " + r.URL.EscapedPath() + "?" + r.URL.RawQuery + " " + hex.EncodeToString(sum[:16])
}

// captureWriter keeps a copy of the headers and (bounded) body a handler
// writes, for the recorded answer.
type captureWriter struct {
	*httprec.Recorder
	body     bytes.Buffer
	overflow bool
}

func (cw *captureWriter) Write(p []byte) (int, error) {
	if !cw.overflow {
		if cw.body.Len()+len(p) > maxRecordedBody {
			cw.overflow = true
			cw.body.Reset()
		} else {
			cw.body.Write(p)
		}
	}
	return cw.Recorder.Write(p)
}

// serveIdempotent runs a mutation carrying an Idempotency-Key: it replays
// the recorded answer of the key, or runs the handler and records its answer.
func (s *Server) serveIdempotent(w *httprec.Recorder, r *http.Request, rt *route, c *call, key string) error {
	if err := validIdempotencyKey(key); err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		return fmt.Errorf("%w: read body: %v", errBadRequest, err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	wh, op := c.params["prefix"], fingerprint(r, body)
	defer s.keys.lock(wh, key)()
	a, ok, err := s.cat.Idempotent(r.Context(), wh, key)
	if err != nil {
		return err
	}
	if ok {
		if a.Op != op {
			return fmt.Errorf("%w: %s %s was first used for another request", errKeyReused, headerIdempotencyKey, key)
		}
		return s.replay(w, r, rt, c, a)
	}
	cw := &captureWriter{Recorder: w}
	herr := rt.h(s, cw, r.WithContext(catalog.WithIdempotencyKey(r.Context(), wh, key, op)), c)
	if herr != nil && w.Status == 0 {
		s.writeError(cw, r, herr)
	}
	if w.Status == 0 || w.Status >= 500 {
		return herr
	}
	ans := catalog.IdempotentAnswer{Op: op, Status: w.Status, Header: replayedHeaders(w.Header())}
	switch {
	case c.ref != nil && w.Status == http.StatusOK:
		ans.RefKind, ans.RefLocation = c.ref.kind, c.ref.location
	case c.vended:
		// A staged create's answer with vended credentials: they are not
		// kept. Nothing was applied, so a retry runs it again and vends
		// afresh.
		return herr
	case cw.overflow:
		// Too large to keep: the Applied mark of the mutation's batch stays,
		// and a retry gets an answer rebuilt from the current state.
		return herr
	default:
		ans.Body = cw.body.Bytes()
	}
	if err := s.cat.RecordIdempotent(context.WithoutCancel(r.Context()), wh, key, ans); err != nil {
		// The mutation's batch marked the key applied, so a retry still
		// does not apply it twice; it gets a rebuilt answer.
		s.log.Warn("record idempotent answer", "warehouse", wh, "err", err)
	}
	return herr
}

func replayedHeaders(h http.Header) map[string]string {
	out := map[string]string{}
	for _, k := range []string{"Content-Type", "ETag"} {
		if v := h.Get(k); v != "" {
			out[k] = v
		}
	}
	return out
}

// replay answers a recorded answer.
func (s *Server) replay(w http.ResponseWriter, r *http.Request, rt *route, c *call, a catalog.IdempotentAnswer) error {
	c.msg = "replay of " + headerIdempotencyKey
	if a.RefLocation != "" {
		data, err := s.cat.ReadMetadataFile(r.Context(), c.params["prefix"], a.RefLocation)
		if err != nil && a.RefKind == catalog.KindTable && c.params["table"] != "" {
			// The file was pruned since (write.metadata.delete-after-commit
			// .enabled): the table's current state answers the commit.
			if t, lerr := s.cat.LoadTable(r.Context(), c.params["prefix"], tableIdent(c, "table")); lerr == nil {
				a.RefLocation, data, err = t.MetadataLocation, t.MetadataJSON, nil
			}
		}
		if err != nil {
			return err
		}
		body := loadResponse{MetadataLocation: a.RefLocation, Metadata: data}
		if a.RefKind == catalog.KindTable {
			w.Header().Set("ETag", etag(a.RefLocation, snapshotsAll))
			if rt.name == "tables.CreateTable" {
				// Credentials are never recorded: a replay asking for
				// them gets fresh ones for the table it created.
				if body, err = s.replayVended(w, r, c, body); err != nil {
					return err
				}
			}
		}
		writeLoad(w, body)
		return nil
	}
	if a.Applied {
		return s.replayApplied(w, r, rt, c)
	}
	for k, v := range a.Header {
		w.Header().Set(k, v)
	}
	if a.Status == http.StatusNoContent || len(a.Body) == 0 {
		w.WriteHeader(a.Status)
		return nil
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(a.Status)
	_, _ = w.Write(a.Body)
	return nil
}

// replayApplied answers a key whose mutation applied but whose answer was
// not recorded: from the current state (the spec allows a newer state).
func (s *Server) replayApplied(w http.ResponseWriter, r *http.Request, rt *route, c *call) error {
	switch rt.name {
	case "tables.CreateNamespace":
		var req namespaceBody
		if err := s.readJSON(w, r, &req); err != nil {
			return err
		}
		ns, err := s.cat.LoadNamespace(r.Context(), c.params["prefix"], req.Namespace)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, namespaceBody{Namespace: ns.Levels, Properties: ns.Properties})
		return nil
	case "tables.UpdateNamespaceProperties":
		return rt.h(s, w, r, c) // setting and removing the same keys again changes nothing
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
