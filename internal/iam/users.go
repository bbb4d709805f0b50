package iam

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"
)

// MinSecretLen is the shortest secret key accepted for users and keys.
const MinSecretLen = 8

// MaxSecretLen is the longest secret key accepted.
const MaxSecretLen = 128

// UserInfo describes a user.
type UserInfo struct {
	Name     string
	Enabled  bool
	Policies []string // attached directly
	Groups   []string
	Created  time.Time
}

func validSecret(secret string) error {
	if len(secret) < MinSecretLen || len(secret) > MaxSecretLen {
		return fmt.Errorf("%w: secret key must be %d to %d characters", ErrWeakSecret, MinSecretLen, MaxSecretLen)
	}
	return nil
}

// AddUser creates an enabled user whose access key is name.
func (s *Store) AddUser(ctx context.Context, name, secret string) error {
	if err := validName("user", name); err != nil {
		return err
	}
	if err := validSecret(secret); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.nameTaken(s.load(), name); err != nil {
		return err
	}
	return s.write(ctx, &Record{Kind: KindUser, Name: name, User: &UserRecord{
		SealedSecret: s.seal.seal(secret, recordKey(KindUser, name)), Created: s.cfg.Now().UTC(),
	}})
}

// RemoveUser deletes a user, its policy attachments, its access keys and
// its group memberships.
func (s *Store) RemoveUser(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := s.load()
	if sn.live(KindUser, name) == nil {
		return fmt.Errorf("%w: %q", ErrNoSuchUser, name)
	}
	recs := []*Record{tombstone(KindUser, name)}
	if sn.live(KindUserMap, name) != nil {
		recs = append(recs, tombstone(KindUserMap, name))
	}
	for _, r := range sn.records {
		switch {
		case r.Deleted:
		case r.Kind == KindAccessKey && r.AccessKey.Parent == name:
			recs = append(recs, tombstone(KindAccessKey, r.Name))
		case r.Kind == KindGroup && slices.Contains(r.Group.Members, name):
			g := *r.Group
			g.Members = slices.DeleteFunc(slices.Clone(g.Members), func(m string) bool { return m == name })
			recs = append(recs, &Record{Kind: KindGroup, Name: r.Name, Group: &g})
		}
	}
	return s.write(ctx, recs...)
}

// SetUserEnabled enables or disables a user; a disabled user's secret and
// access keys are refused.
func (s *Store) SetUserEnabled(ctx context.Context, name string, enabled bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.load().live(KindUser, name)
	if r == nil {
		return fmt.Errorf("%w: %q", ErrNoSuchUser, name)
	}
	u := *r.User
	u.Disabled = !enabled
	return s.write(ctx, &Record{Kind: KindUser, Name: name, User: &u})
}

// User describes one user.
func (s *Store) User(name string) (UserInfo, error) {
	sn := s.load()
	r := sn.live(KindUser, name)
	if r == nil {
		return UserInfo{}, fmt.Errorf("%w: %q", ErrNoSuchUser, name)
	}
	groups := slices.Clone(sn.groupsOf(name))
	return UserInfo{Name: name, Enabled: !r.User.Disabled, Policies: sn.mapping(KindUserMap, name),
		Groups: groups, Created: r.User.Created}, nil
}

// Users describes every user, sorted by name.
func (s *Store) Users() []UserInfo {
	sn := s.load()
	var out []UserInfo
	for _, r := range sn.records {
		if r.Kind == KindUser && !r.Deleted {
			u, _ := s.User(r.Name)
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
