package iam

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/twinlake/twinlake/internal/iam/policy"
)

// AccessKeyOptions are the settings of a new access key; zero values pick
// defaults (generated key and secret, no session policy, no expiry).
type AccessKeyOptions struct {
	AccessKey, SecretKey string
	// SessionPolicy narrows the parent's rights; nil means none.
	SessionPolicy []byte
	Expiry        time.Time
	Name          string
	Description   string
}

// AccessKeyInfo describes an access key (never its secret).
type AccessKeyInfo struct {
	AccessKey     string
	Parent        string
	Name          string
	Description   string
	Enabled       bool
	Expiry        time.Time
	SessionPolicy json.RawMessage
	Created       time.Time
}

// CreateAccessKey creates an access key owned by parent (a user, or root)
// and returns its credential; the secret is shown only here.
func (s *Store) CreateAccessKey(ctx context.Context, parent string, o AccessKeyOptions) (Credential, error) {
	c := Credential{AccessKey: o.AccessKey, SecretKey: o.SecretKey}
	if c.AccessKey == "" {
		c.AccessKey = randomKey(20)
	}
	if c.SecretKey == "" {
		c.SecretKey = randomSecret()
	}
	if err := validName("access key", c.AccessKey); err != nil {
		return Credential{}, err
	}
	if err := validSecret(c.SecretKey); err != nil {
		return Credential{}, err
	}
	if !o.Expiry.IsZero() && !o.Expiry.After(s.cfg.Now()) {
		return Credential{}, fmt.Errorf("%w: %s is in the past", ErrInvalidExpiry, o.Expiry.UTC().Format(time.RFC3339))
	}
	var sess json.RawMessage
	if len(o.SessionPolicy) > 0 {
		p, err := policy.Parse(o.SessionPolicy)
		if err != nil {
			return Credential{}, err
		}
		sess = p.JSON()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := s.load()
	if parent != s.root.AccessKey && sn.live(KindUser, parent) == nil {
		return Credential{}, fmt.Errorf("%w: %q", ErrNoSuchUser, parent)
	}
	if err := s.nameTaken(sn, c.AccessKey); err != nil {
		return Credential{}, err
	}
	rec := &AccessKeyRecord{
		Parent: parent, SealedSecret: s.seal.seal(c.SecretKey, recordKey(KindAccessKey, c.AccessKey)),
		SessionPolicy: sess, Expiry: o.Expiry.UTC(), Name: o.Name, Description: o.Description, Created: s.cfg.Now().UTC(),
	}
	if o.Expiry.IsZero() {
		rec.Expiry = time.Time{}
	}
	return c, s.write(ctx, &Record{Kind: KindAccessKey, Name: c.AccessKey, AccessKey: rec})
}

// RemoveAccessKey deletes an access key.
func (s *Store) RemoveAccessKey(ctx context.Context, accessKey string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.load().live(KindAccessKey, accessKey) == nil {
		return fmt.Errorf("%w: %q", ErrNoSuchAccessKey, accessKey)
	}
	return s.write(ctx, tombstone(KindAccessKey, accessKey))
}

// SetAccessKeyEnabled enables or disables an access key.
func (s *Store) SetAccessKeyEnabled(ctx context.Context, accessKey string, enabled bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.load().live(KindAccessKey, accessKey)
	if r == nil {
		return fmt.Errorf("%w: %q", ErrNoSuchAccessKey, accessKey)
	}
	a := *r.AccessKey
	a.Disabled = !enabled
	return s.write(ctx, &Record{Kind: KindAccessKey, Name: accessKey, AccessKey: &a})
}

// AccessKey describes one access key.
func (s *Store) AccessKey(accessKey string) (AccessKeyInfo, error) {
	r := s.load().live(KindAccessKey, accessKey)
	if r == nil {
		return AccessKeyInfo{}, fmt.Errorf("%w: %q", ErrNoSuchAccessKey, accessKey)
	}
	a := r.AccessKey
	return AccessKeyInfo{AccessKey: accessKey, Parent: a.Parent, Name: a.Name, Description: a.Description,
		Enabled: !a.Disabled, Expiry: a.Expiry, SessionPolicy: a.SessionPolicy, Created: a.Created}, nil
}

// AccessKeys describes the access keys of parent ("" for every key),
// sorted by access key.
func (s *Store) AccessKeys(parent string) []AccessKeyInfo {
	var out []AccessKeyInfo
	for _, r := range s.load().records {
		if r.Kind == KindAccessKey && !r.Deleted && (parent == "" || r.AccessKey.Parent == parent) {
			a, _ := s.AccessKey(r.Name)
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AccessKey < out[j].AccessKey })
	return out
}

// randomKey returns n upper-case letters and digits, the shape of AWS
// access key IDs.
func randomKey(n int) string { return randomFrom(keyLetters, n) }

// AccessKeyUpdate changes an access key; nil fields are left as they are.
type AccessKeyUpdate struct {
	SecretKey *string
	// SessionPolicy replaces the session policy; an empty document removes it.
	SessionPolicy *[]byte
	Expiry        *time.Time // zero time removes the expiry
	Name          *string
	Description   *string
}

// UpdateAccessKey applies u to an access key, checking it as
// CreateAccessKey does; on any error nothing changes.
func (s *Store) UpdateAccessKey(ctx context.Context, accessKey string, u AccessKeyUpdate) error {
	if u.SecretKey != nil {
		if err := validSecret(*u.SecretKey); err != nil {
			return err
		}
	}
	if u.Expiry != nil && !u.Expiry.IsZero() && !u.Expiry.After(s.cfg.Now()) {
		return fmt.Errorf("%w: %s is in the past", ErrInvalidExpiry, u.Expiry.UTC().Format(time.RFC3339))
	}
	var sess json.RawMessage
	if u.SessionPolicy != nil && len(*u.SessionPolicy) > 0 {
		p, err := policy.Parse(*u.SessionPolicy)
		if err != nil {
			return err
		}
		sess = p.JSON()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.load().live(KindAccessKey, accessKey)
	if r == nil {
		return fmt.Errorf("%w: %q", ErrNoSuchAccessKey, accessKey)
	}
	a := *r.AccessKey
	if u.SecretKey != nil {
		a.SealedSecret = s.seal.seal(*u.SecretKey, recordKey(KindAccessKey, accessKey))
	}
	if u.SessionPolicy != nil {
		a.SessionPolicy = sess
	}
	if u.Expiry != nil {
		a.Expiry = u.Expiry.UTC()
	}
	if u.Name != nil {
		a.Name = *u.Name
	}
	if u.Description != nil {
		a.Description = *u.Description
	}
	return s.write(ctx, &Record{Kind: KindAccessKey, Name: accessKey, AccessKey: &a})
}
