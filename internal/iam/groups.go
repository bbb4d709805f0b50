package iam

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"
)

// GroupInfo describes a group.
type GroupInfo struct {
	Name     string
	Enabled  bool
	Members  []string
	Policies []string
	Created  time.Time
}

// AddGroupMembers creates the group if needed and adds members (which must
// be existing users) to it.
func (s *Store) AddGroupMembers(ctx context.Context, group string, members []string) error {
	if err := validName("group", group); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := s.load()
	for _, m := range members {
		if sn.live(KindUser, m) == nil {
			return fmt.Errorf("%w: %q", ErrNoSuchUser, m)
		}
	}
	g := &GroupRecord{Created: s.cfg.Now().UTC()}
	if r := sn.live(KindGroup, group); r != nil {
		c := *r.Group
		c.Members = slices.Clone(c.Members)
		g = &c
	}
	for _, m := range members {
		if !slices.Contains(g.Members, m) {
			g.Members = append(g.Members, m)
		}
	}
	sort.Strings(g.Members)
	return s.write(ctx, &Record{Kind: KindGroup, Name: group, Group: g})
}

// RemoveGroupMembers removes members from a group; with no members it
// removes the group itself, which must then be empty.
func (s *Store) RemoveGroupMembers(ctx context.Context, group string, members []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := s.load()
	r := sn.live(KindGroup, group)
	if r == nil {
		return fmt.Errorf("%w: %q", ErrNoSuchGroup, group)
	}
	if len(members) == 0 {
		if len(r.Group.Members) > 0 {
			return fmt.Errorf("%w: %q has %d members; remove them first", ErrGroupNotEmpty, group, len(r.Group.Members))
		}
		recs := []*Record{tombstone(KindGroup, group)}
		if sn.live(KindGroupMap, group) != nil {
			recs = append(recs, tombstone(KindGroupMap, group))
		}
		return s.write(ctx, recs...)
	}
	g := *r.Group
	for _, m := range members {
		if !slices.Contains(g.Members, m) {
			return fmt.Errorf("%w: %q is not a member of %q", ErrNoSuchUser, m, group)
		}
	}
	g.Members = slices.DeleteFunc(slices.Clone(g.Members), func(m string) bool { return slices.Contains(members, m) })
	return s.write(ctx, &Record{Kind: KindGroup, Name: group, Group: &g})
}

// SetGroupEnabled enables or disables a group; a disabled group's policies
// stop applying to its members.
func (s *Store) SetGroupEnabled(ctx context.Context, group string, enabled bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.load().live(KindGroup, group)
	if r == nil {
		return fmt.Errorf("%w: %q", ErrNoSuchGroup, group)
	}
	g := *r.Group
	g.Disabled = !enabled
	return s.write(ctx, &Record{Kind: KindGroup, Name: group, Group: &g})
}

// Group describes one group.
func (s *Store) Group(name string) (GroupInfo, error) {
	sn := s.load()
	r := sn.live(KindGroup, name)
	if r == nil {
		return GroupInfo{}, fmt.Errorf("%w: %q", ErrNoSuchGroup, name)
	}
	return GroupInfo{Name: name, Enabled: !r.Group.Disabled, Members: r.Group.Members,
		Policies: sn.mapping(KindGroupMap, name), Created: r.Group.Created}, nil
}

// Groups describes every group, sorted by name.
func (s *Store) Groups() []GroupInfo {
	var out []GroupInfo
	for _, r := range s.load().records {
		if r.Kind == KindGroup && !r.Deleted {
			g, _ := s.Group(r.Name)
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
