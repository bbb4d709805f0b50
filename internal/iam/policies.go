package iam

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/twinlake/twinlake/internal/iam/policy"
)

// PolicyInfo describes a named policy.
type PolicyInfo struct {
	Name     string
	Builtin  bool
	Document json.RawMessage
}

// PolicyEntities lists who a policy is attached to.
type PolicyEntities struct {
	Policy string
	Users  []string
	Groups []string
}

// PutPolicy creates or replaces a named policy. The document must parse as
// an identity policy (errors match policy.ErrInvalidPolicy and say where).
func (s *Store) PutPolicy(ctx context.Context, name string, doc []byte) error {
	if err := validName("policy", name); err != nil {
		return err
	}
	if _, ok := policy.Builtin[name]; ok {
		return fmt.Errorf("%w: %q", ErrBuiltinPolicy, name)
	}
	p, err := policy.Parse(doc)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(ctx, &Record{Kind: KindPolicy, Name: name, Policy: &PolicyRecord{Document: p.JSON(), Created: s.cfg.Now().UTC()}})
}

// RemovePolicy deletes a named policy that nothing is attached to.
func (s *Store) RemovePolicy(ctx context.Context, name string) error {
	if _, ok := policy.Builtin[name]; ok {
		return fmt.Errorf("%w: %q", ErrBuiltinPolicy, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := s.load()
	if sn.live(KindPolicy, name) == nil {
		return fmt.Errorf("%w: %q", ErrNoSuchPolicy, name)
	}
	if e := sn.entities(name); len(e.Users)+len(e.Groups) > 0 {
		return fmt.Errorf("%w: %q is attached to users %v and groups %v; detach it first", ErrPolicyAttached, name, e.Users, e.Groups)
	}
	return s.write(ctx, tombstone(KindPolicy, name))
}

// Policy returns one named policy.
func (s *Store) Policy(name string) (PolicyInfo, error) {
	if p, ok := policy.Builtin[name]; ok {
		return PolicyInfo{Name: name, Builtin: true, Document: p.JSON()}, nil
	}
	r := s.load().live(KindPolicy, name)
	if r == nil {
		return PolicyInfo{}, fmt.Errorf("%w: %q", ErrNoSuchPolicy, name)
	}
	return PolicyInfo{Name: name, Document: r.Policy.Document}, nil
}

// Policies returns every policy, built-ins included, sorted by name.
func (s *Store) Policies() []PolicyInfo {
	var out []PolicyInfo
	for _, n := range policy.BuiltinNames() {
		p, _ := s.Policy(n)
		out = append(out, p)
	}
	for _, r := range s.load().records {
		if r.Kind == KindPolicy && !r.Deleted {
			out = append(out, PolicyInfo{Name: r.Name, Document: r.Policy.Document})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Entity names a user or a group for Attach and Detach.
type Entity struct {
	User, Group string
}

func (e Entity) mapKind() (kind, name string) {
	if e.Group != "" {
		return KindGroupMap, e.Group
	}
	return KindUserMap, e.User
}

// Attach attaches existing policies to an existing user or group; policies
// already attached are left as they are.
func (s *Store) Attach(ctx context.Context, e Entity, names []string) error {
	return s.changeMapping(ctx, e, names, true)
}

// Detach detaches policies from a user or group; each must be attached.
func (s *Store) Detach(ctx context.Context, e Entity, names []string) error {
	return s.changeMapping(ctx, e, names, false)
}

func (s *Store) changeMapping(ctx context.Context, e Entity, names []string, attach bool) error {
	if (e.User == "") == (e.Group == "") || len(names) == 0 {
		return fmt.Errorf("%w: name policies and exactly one of a user or a group", ErrInvalidName)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := s.load()
	if e.User != "" && sn.live(KindUser, e.User) == nil {
		return fmt.Errorf("%w: %q", ErrNoSuchUser, e.User)
	}
	if e.Group != "" && sn.live(KindGroup, e.Group) == nil {
		return fmt.Errorf("%w: %q", ErrNoSuchGroup, e.Group)
	}
	kind, name := e.mapKind()
	cur := slices.Clone(sn.mapping(kind, name))
	for _, n := range names {
		switch {
		case attach && sn.policies[n] == nil:
			return fmt.Errorf("%w: %q", ErrNoSuchPolicy, n)
		case attach && !slices.Contains(cur, n):
			cur = append(cur, n)
		case !attach && !slices.Contains(cur, n):
			return fmt.Errorf("%w: %q is not attached to %s", ErrPolicyNotAttached, n, name)
		case !attach:
			cur = slices.DeleteFunc(cur, func(p string) bool { return p == n })
		}
	}
	if len(cur) == 0 {
		return s.write(ctx, tombstone(kind, name))
	}
	sort.Strings(cur)
	return s.write(ctx, &Record{Kind: kind, Name: name, Mapping: &MappingRecord{Policies: cur}})
}

// Entities returns, for every policy attached to anything, its users and
// groups, sorted by policy name.
func (s *Store) Entities() []PolicyEntities {
	sn := s.load()
	var out []PolicyEntities
	for _, p := range s.Policies() {
		if e := sn.entities(p.Name); len(e.Users)+len(e.Groups) > 0 {
			out = append(out, e)
		}
	}
	return out
}

func (sn *snapshot) entities(name string) PolicyEntities {
	e := PolicyEntities{Policy: name}
	for _, r := range sn.records {
		if r.Deleted || !slices.Contains(r.mappingPolicies(), name) {
			continue
		}
		if r.Kind == KindUserMap {
			e.Users = append(e.Users, r.Name)
		} else {
			e.Groups = append(e.Groups, r.Name)
		}
	}
	sort.Strings(e.Users)
	sort.Strings(e.Groups)
	return e
}

func (r *Record) mappingPolicies() []string {
	if r.Mapping == nil {
		return nil
	}
	return r.Mapping.Policies
}
