package iam

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/twinlake/twinlake/internal/meta"
)

// The IAM data key. Secret keys at rest are sealed (sealer) under a random
// 256-bit data key, stored in the metadata store only wrapped: with
// AES-256-GCM under a key derived (HKDF-SHA256) from the root secret, and,
// when the site is given a KMS key (TWINLAKE_KMS_SECRET_KEY), under that
// too. Changing the root password therefore re-wraps one key instead of
// losing every secret, provided the site can open the stored key once:
//
//   - with the KMS key, when one is configured and was when the key was
//     last written: no operator action;
//   - with a previous root password (Config.PreviousRootSecrets: the one
//     the operator supplies; Config.StoredRootSecret: the generated one
//     stored in the data directory when the root now comes from the
//     environment).
//
// The site then draws a new data key, re-seals every stored secret under
// it and stores it wrapped under the current root secret (and KMS key),
// all in one atomic batch, so a copy of the data directory taken under
// the old root password opens nothing sealed since. When nothing opens the
// stored key, Open fails with ErrRootChanged and changes nothing.
//
// A deployment from before the data key (secrets sealed directly under the
// root-derived key) is converted the same way at its first start.

// dataKeyKey is the data key's place in the metadata store, outside the
// "iam/" records: it is the site's own and never replicated.
const dataKeyKey = "sys/iam-data-key"

// Versions of the wrapping: the HKDF info of the root-derived wrapping key
// and the additional data of each wrap.
const (
	dataKeyFmtV1 = 1
	wrapInfo     = "iam data key wrap, aes-256-gcm"
	wrapAADRoot  = "twinlake-iam-data-key-v1 root"
	wrapAADKMS   = "twinlake-iam-data-key-v1 kms"
)

// ErrRootChanged is returned by Open when the stored data key opens
// neither with the root secret, nor with the KMS key, nor with any
// previous root secret given: the root password changed and the one it
// replaced was not supplied (or was wrong). Nothing was changed.
var ErrRootChanged = errors.New("iam: stored secrets are sealed under another root password")

// dataKeyRecord is the stored, wrapped data key.
type dataKeyRecord struct {
	Format int `json:"format"`
	// ID names the data key in logs (random, not derived from it).
	ID      string    `json:"id"`
	Root    []byte    `json:"root"`
	KMS     []byte    `json:"kms,omitempty"`
	Created time.Time `json:"created"`
}

// sealerFromKey returns the sealer of a raw 256-bit key.
func sealerFromKey(key []byte) (sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return sealer{}, err
	}
	aead, err := cipher.NewGCM(block)
	return sealer{aead}, err
}

// keyOpener is one way to open the stored data key, tried in order.
type keyOpener struct {
	what string // for logs and errors: never the secret
	open func(rec *dataKeyRecord) ([]byte, bool)
}

func rootOpener(what, secret string) keyOpener {
	return keyOpener{what: what, open: func(rec *dataKeyRecord) ([]byte, bool) {
		kek, err := newSealerFor(secret, wrapInfo)
		if err != nil {
			return nil, false
		}
		k, err := kek.open(rec.Root, wrapAADRoot)
		return []byte(k), err == nil && len(k) == 32
	}}
}

func kmsOpener(kms []byte) keyOpener {
	return keyOpener{what: "the KMS key", open: func(rec *dataKeyRecord) ([]byte, bool) {
		if len(rec.KMS) == 0 {
			return nil, false
		}
		kek, err := sealerFromKey(kms)
		if err != nil {
			return nil, false
		}
		k, err := kek.open(rec.KMS, wrapAADKMS)
		return []byte(k), err == nil && len(k) == 32
	}}
}

// unlock opens (or first creates) the data key and installs its sealer,
// re-keying when the root secret changed. Called by Open only.
func (s *Store) unlock() error {
	raw, err := s.db.Get([]byte(dataKeyKey))
	if errors.Is(err, meta.ErrNotFound) {
		return s.convertLegacy()
	}
	if err != nil {
		return err
	}
	var rec dataKeyRecord
	if err := json.Unmarshal(raw, &rec); err != nil || rec.Format != dataKeyFmtV1 {
		return fmt.Errorf("iam: unreadable data key record %s (format %d): %v", dataKeyKey, rec.Format, err)
	}
	if dek, ok := rootOpener("the root password", s.root.SecretKey).open(&rec); ok {
		if s.seal, err = sealerFromKey(dek); err != nil {
			return err
		}
		if len(s.cfg.KMSKey) > 0 {
			if _, ok := kmsOpener(s.cfg.KMSKey).open(&rec); !ok {
				// A KMS key newly configured (or changed): wrap the same key
				// under it too.
				s.log.Info("IAM data key now also wrapped under the KMS key", "dataKey", rec.ID)
				return s.storeDataKey(nil, dek, rec.ID, rec.Created)
			}
		}
		if len(s.cfg.PreviousRootSecrets) > 0 {
			s.log.Info("the root password has not changed: the previous root password is not needed", "dataKey", rec.ID)
		}
		return nil
	}
	var tried []string
	for _, o := range s.openers() {
		tried = append(tried, o.what)
		dek, ok := o.open(&rec)
		if !ok {
			continue
		}
		old, err := sealerFromKey(dek)
		if err != nil {
			return err
		}
		s.log.Warn("the root password changed: re-sealing IAM secrets under a new data key", "openedWith", o.what, "dataKey", rec.ID)
		return s.rekey(old)
	}
	return s.refuse(tried)
}

// openers lists the other ways to open the stored key: the KMS key, then
// each previous root secret that differs from the current one.
func (s *Store) openers() []keyOpener {
	var out []keyOpener
	if len(s.cfg.KMSKey) > 0 {
		out = append(out, kmsOpener(s.cfg.KMSKey))
	}
	for i, p := range s.cfg.PreviousRootSecrets {
		if p != "" && p != s.root.SecretKey {
			out = append(out, rootOpener(fmt.Sprintf("previous root password #%d", i+1), p))
		}
	}
	if p := s.cfg.StoredRootSecret; p != "" && p != s.root.SecretKey {
		out = append(out, rootOpener("the generated root password in the data directory", p))
	}
	return out
}

// refuse explains why Open cannot proceed.
func (s *Store) refuse(tried []string) error {
	if len(tried) == 0 {
		return fmt.Errorf("%w: the root password changed; start once with the previous root password "+
			"(TWINLAKE_ROOT_PASSWORD_PREVIOUS) so that the site re-wraps its IAM key; nothing was changed", ErrRootChanged)
	}
	return fmt.Errorf("%w: neither the root password nor %s opens the IAM key: give the root password the "+
		"site last ran with as TWINLAKE_ROOT_PASSWORD_PREVIOUS; nothing was changed", ErrRootChanged, joinOr(tried))
}

func joinOr(list []string) string {
	switch len(list) {
	case 1:
		return list[0]
	case 2:
		return list[0] + " or " + list[1]
	}
	out := ""
	for i, w := range list {
		switch {
		case i == len(list)-1:
			out += ", or " + w
		case i > 0:
			out += ", " + w
		default:
			out = w
		}
	}
	return out
}

// convertLegacy starts a site that has no data key yet: a new site, or one
// whose secrets were sealed directly under the root-derived key. Those are
// opened with the root secret (or a previous one) and re-sealed under a
// new data key.
func (s *Store) convertLegacy() error {
	first := s.firstSealed()
	if first == nil {
		return s.rekey(sealer{})
	}
	candidates := []struct{ what, secret string }{{"the root password", s.root.SecretKey}}
	for i, p := range s.cfg.PreviousRootSecrets {
		if p != "" && p != s.root.SecretKey {
			candidates = append(candidates, struct{ what, secret string }{fmt.Sprintf("previous root password #%d", i+1), p})
		}
	}
	if p := s.cfg.StoredRootSecret; p != "" && p != s.root.SecretKey {
		candidates = append(candidates, struct{ what, secret string }{"the generated root password in the data directory", p})
	}
	var tried []string
	for _, c := range candidates {
		old, err := newSealer(c.secret)
		if err != nil {
			return err
		}
		if _, err := old.open(first.sealed, first.aad); err == nil {
			s.log.Info("sealing IAM secrets under a data key (first start of this version)", "openedWith", c.what)
			return s.rekey(old)
		}
		if c.secret != s.root.SecretKey {
			tried = append(tried, c.what)
		}
	}
	return s.refuse(tried)
}

// sealedSecret is one stored sealed secret and its additional data.
type sealedSecret struct {
	sealed []byte
	aad    string
}

// firstSealed returns a stored sealed secret, or nil if there is none.
func (s *Store) firstSealed() *sealedSecret {
	var out *sealedSecret
	prefix := []byte(keyPrefix)
	meta.Scan(s.db, prefix, meta.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		r, err := decodeRecord(k, v)
		if err != nil || r.Deleted {
			return true, nil
		}
		if sec := r.sealedSecret(); sec != nil {
			out = &sealedSecret{sealed: *sec, aad: string(k)}
			return false, nil
		}
		return true, nil
	})
	return out
}

// sealedSecret points at the record's sealed secret, if it holds one.
func (r *Record) sealedSecret() *[]byte {
	switch {
	case r.Deleted:
		return nil
	case r.User != nil:
		return &r.User.SealedSecret
	case r.AccessKey != nil:
		return &r.AccessKey.SealedSecret
	}
	return nil
}

// rekey draws a new data key, re-seals every stored secret that opens
// under old (none when old is the zero sealer: a new site) and stores the
// records with the wrapped key in one batch. Records keep their version:
// re-sealing is not a change to replicate. A secret that does not open is
// left as it is, and refused as before.
func (s *Store) rekey(old sealer) error {
	dek := make([]byte, 32)
	rand.Read(dek)
	next, err := sealerFromKey(dek)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	resealed, unreadable := 0, 0
	if old.aead != nil {
		prefix := []byte(keyPrefix)
		err := meta.Scan(s.db, prefix, meta.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
			r, err := decodeRecord(k, v)
			if err != nil {
				return true, nil // skipped by reload too
			}
			sec := r.sealedSecret()
			if sec == nil {
				return true, nil
			}
			plain, err := old.open(*sec, string(k))
			if err != nil {
				unreadable++
				s.log.Error("secret does not decrypt with the old key; left as it is and refused", "record", string(k))
				return true, nil
			}
			*sec = next.seal(plain, string(k))
			data, err := json.Marshal(r)
			if err != nil {
				return false, err
			}
			b.Set(append([]byte(nil), k...), data)
			resealed++
			return true, nil
		})
		if err != nil {
			return err
		}
		sp := []byte(sealedPrefix)
		err = meta.Scan(s.db, sp, meta.PrefixEnd(sp), func(k, v []byte) (bool, error) {
			plain, err := old.open(v, string(k))
			if err != nil {
				unreadable++
				s.log.Error("sealed value does not decrypt with the old key; left as it is", "key", string(k))
				return true, nil
			}
			b.Set(append([]byte(nil), k...), next.seal(plain, string(k)))
			resealed++
			return true, nil
		})
		if err != nil {
			return err
		}
	}
	id := make([]byte, 8)
	rand.Read(id)
	if err := s.storeDataKey(b, dek, hex.EncodeToString(id), s.cfg.Now().UTC()); err != nil {
		return err
	}
	s.seal = next
	if old.aead != nil {
		s.log.Info("IAM secrets re-sealed under a new data key", "dataKey", hex.EncodeToString(id), "resealed", resealed, "unreadable", unreadable)
	}
	return nil
}

// storeDataKey wraps dek under the root secret (and the KMS key) and
// commits it, with whatever b holds (nil: a batch of its own).
func (s *Store) storeDataKey(b meta.Batch, dek []byte, id string, created time.Time) error {
	kek, err := newSealerFor(s.root.SecretKey, wrapInfo)
	if err != nil {
		return err
	}
	rec := dataKeyRecord{Format: dataKeyFmtV1, ID: id, Root: kek.seal(string(dek), wrapAADRoot), Created: created}
	if len(s.cfg.KMSKey) > 0 {
		kk, err := sealerFromKey(s.cfg.KMSKey)
		if err != nil {
			return fmt.Errorf("iam: KMS key: %w", err)
		}
		rec.KMS = kk.seal(string(dek), wrapAADKMS)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if b == nil {
		b = s.db.NewBatch()
	}
	b.Set([]byte(dataKeyKey), data)
	if err := b.Commit(true); err != nil {
		return fmt.Errorf("iam: commit data key: %w", err)
	}
	return nil
}

// Sealed values: other parts of the site keep a secret of their own (the
// site-replication service credential) sealed under the data key, each
// under sealedPrefix+purpose, written in the caller's own batch. A
// re-keying re-seals them with the IAM records.
const sealedPrefix = "sys/sealed/"

// SealedValue returns the store key and sealed value of secret for
// purpose, for the caller to write in its batch. It never fails: a store
// opens only with its data key.
func (s *Store) SealedValue(purpose, secret string) (key, value []byte) {
	k := sealedPrefix + purpose
	return []byte(k), s.seal.seal(secret, k)
}

// OpenValue returns the secret stored sealed for purpose; ok is false when
// none is stored.
func (s *Store) OpenValue(purpose string) (secret string, ok bool, err error) {
	k := sealedPrefix + purpose
	raw, err := s.db.Get([]byte(k))
	if errors.Is(err, meta.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	secret, err = s.seal.open(raw, k)
	return secret, err == nil, err
}
