package scanner

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/twinlake/twinlake/internal/meta"
)

// Metadata keys (prefix "scan/"):
//
//	scan/state                          persisted: resync window and rebuild state
//	scan/discard/<warehouse>\x00<vid>   an identity-record version the rebuild discarded
//	scan/backfill                       the last backfill job
const (
	keyState       = "scan/state"
	pfxDiscard     = "scan/discard/"
	keyBackfill    = "scan/backfill"
	maxRebuildRuns = 5
)

// RebuildStatus is the state of a catalog resync rebuild.
type RebuildStatus struct {
	State     string    `json:"state,omitempty"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"lastError,omitempty"`
	Started   time.Time `json:"started,omitzero"`
	Finished  time.Time `json:"finished,omitzero"`
	BackupAt  string    `json:"backup,omitempty"`
	Discarded int       `json:"discarded,omitempty"`
}

// persisted is the part of the scanner's state that survives restarts.
type persisted struct {
	// Window is an open catalog resync window: inbound warehouse
	// replication accepted, client writes rejected, catalog untouched.
	Window  bool          `json:"window"`
	Rebuild RebuildStatus `json:"rebuild"`
}

func loadPersisted(m meta.Store) (persisted, error) {
	var p persisted
	raw, err := m.Get([]byte(keyState))
	if errors.Is(err, meta.ErrNotFound) {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	return p, json.Unmarshal(raw, &p)
}

func (s *Scanner) persisted() persisted {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.persist
}

// savePersisted applies fn to the persisted state and stores it durably.
func (s *Scanner) savePersisted(fn func(p *persisted)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.persist
	fn(&p)
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	b := s.cfg.Meta.NewBatch()
	b.Set([]byte(keyState), data)
	if err := b.Commit(true); err != nil {
		return err
	}
	s.persist = p
	return nil
}

func discardKey(wh, versionID string) []byte { return []byte(pfxDiscard + wh + "\x00" + versionID) }

func (s *Scanner) discarded(wh, versionID string) bool {
	_, err := s.cfg.Meta.Get(discardKey(wh, versionID))
	return err == nil
}
