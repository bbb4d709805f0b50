package replication

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twinlake/twinlake/internal/objects"
)

// SiteSpec names a site to join: its alias name, endpoint, and admin
// credentials to install the configuration there.
type SiteSpec struct {
	Name      string `json:"name"`
	Endpoint  string `json:"endpoint"`
	AccessKey string `json:"accessKey"`
	SecretKey string `json:"secretKey"`
}

// Add joins sites into site replication. sites[0] is this site; every
// other site must hold no buckets. Add creates the service credential on
// every site, enables versioning on this site's buckets and queues them,
// settings and objects, and every IAM record, for every new peer. A site
// other than the first that holds IAM records of its own is refused
// (ErrPeerHasData): its identities are never merged or silently dropped.
func (e *Engine) Add(ctx context.Context, sites []SiteSpec) (State, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(sites) < 2 {
		return State{}, fmt.Errorf("%w: at least two sites are needed", ErrInvalidRequest)
	}
	if e.state.Load().Enabled() {
		return State{}, fmt.Errorf("%w: this site is already in a site replication configuration; remove it first", ErrInvalidRequest)
	}
	st := &State{Updated: time.Now().UnixNano()}
	var peers []Peer
	seen := map[string]bool{}
	for i, s := range sites {
		if s.Name == "" || s.Endpoint == "" {
			return State{}, fmt.Errorf("%w: site %d needs a name and an endpoint", ErrInvalidRequest, i+1)
		}
		p, err := e.cfg.Dial(s.Endpoint, Credentials{AccessKey: s.AccessKey, SecretKey: s.SecretKey})
		if err != nil {
			return State{}, fmt.Errorf("%w: %s: %v", ErrInvalidRequest, s.Name, err)
		}
		info, err := p.Info(ctx)
		if err != nil {
			return State{}, fmt.Errorf("site %s (%s): %w", s.Name, s.Endpoint, err)
		}
		if seen[info.DeploymentID] {
			return State{}, fmt.Errorf("%w: site %s is listed twice", ErrInvalidRequest, s.Name)
		}
		seen[info.DeploymentID] = true
		switch {
		case i == 0 && info.DeploymentID != e.cfg.SiteID:
			return State{}, fmt.Errorf("%w: the first site (%s) must be the site the request is sent to", ErrInvalidRequest, s.Name)
		case i > 0 && info.Replication != nil:
			return State{}, fmt.Errorf("%w: site %s is already in a site replication configuration", ErrInvalidRequest, s.Name)
		case i > 0 && len(info.Warehouses) > 0:
			return State{}, fmt.Errorf("%w: site %s holds warehouses (%s)", ErrPeerHasData, s.Name, strings.Join(info.Warehouses, ", "))
		case i > 0 && (len(info.Buckets) > 0 || info.Objects > 0):
			return State{}, fmt.Errorf("%w: site %s holds %d bucket(s) (%s)", ErrPeerHasData, s.Name, len(info.Buckets), strings.Join(info.Buckets, ", "))
		case i > 0 && info.IAMRecords > 0:
			return State{}, fmt.Errorf("%w: site %s holds %d IAM record(s) (users, groups, policies, attachments or access keys); "+
				"only the first site's identities replicate: remove them there, or create them on %s, before joining",
				ErrPeerHasData, s.Name, info.IAMRecords, sites[0].Name)
		}
		st.Sites = append(st.Sites, Site{ID: info.DeploymentID, Name: s.Name, Endpoint: s.Endpoint})
		peers = append(peers, p)
	}
	st.ServiceAccessKey = "site-replicator-" + randomHex(6)
	st.ServiceSecretKey = randomHex(20)
	for i, p := range peers[1:] {
		if err := p.Join(ctx, *st); err != nil {
			return State{}, fmt.Errorf("install configuration on %s: %w", sites[i+1].Name, err)
		}
	}
	if err := e.saveStateLocked(st); err != nil {
		return State{}, err
	}
	if err := e.restartTargetsLocked(); err != nil {
		return State{}, err
	}
	for _, b := range e.cfg.Objects.ListBuckets(ctx) {
		// Enabling versioning (or re-stating it) journals the bucket for
		// every peer.
		state := objects.VersioningEnabled
		if err := e.cfg.Objects.SetVersioning(ctx, b.Name, state); err != nil {
			return State{}, err
		}
	}
	for _, s := range e.peers(st) {
		if _, err := e.startResyncLocked(s.ID); err != nil {
			return State{}, err
		}
	}
	return *st, nil
}

// Join installs a configuration sent by the site that ran Add (or Remove).
// A configuration that no longer lists this site disables replication here.
func (e *Engine) Join(ctx context.Context, st State) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	cur := e.state.Load()
	if cur.Updated > st.Updated {
		return fmt.Errorf("%w: a newer configuration is installed", ErrInvalidRequest)
	}
	member := slices.ContainsFunc(st.Sites, func(s Site) bool { return s.ID == e.cfg.SiteID })
	if !member || !st.Enabled() {
		st = State{Updated: st.Updated}
	} else if !cur.Enabled() {
		info := e.LocalInfo(ctx)
		if len(info.Buckets) > 0 {
			return fmt.Errorf("%w: this site holds %d bucket(s)", ErrPeerHasData, len(info.Buckets))
		}
		if info.IAMRecords > 0 {
			return fmt.Errorf("%w: this site holds %d IAM record(s); remove its users, groups, policies and access keys before joining",
				ErrPeerHasData, info.IAMRecords)
		}
	}
	if err := e.saveStateLocked(&st); err != nil {
		return err
	}
	return e.restartTargetsLocked()
}

// Remove takes sites (by name) out of the configuration, or every site
// when all is set, on every site that can be reached.
func (e *Engine) Remove(ctx context.Context, names []string, all bool) (State, error) {
	e.mu.Lock()
	cur := *e.state.Load()
	e.mu.Unlock()
	if !cur.Enabled() {
		return State{}, ErrNotConfigured
	}
	if !all && len(names) == 0 {
		return State{}, fmt.Errorf("%w: name the sites to remove, or --all", ErrInvalidRequest)
	}
	// A new service credential: a removed site that cannot be told (it is
	// down) can then no longer push changes into the remaining sites.
	next := State{ServiceAccessKey: "site-replicator-" + randomHex(6), ServiceSecretKey: randomHex(20), Updated: time.Now().UnixNano()}
	for _, n := range names {
		if !slices.ContainsFunc(cur.Sites, func(s Site) bool { return s.Name == n || s.ID == n }) {
			return State{}, fmt.Errorf("%w: no site %q in the configuration", ErrInvalidRequest, n)
		}
	}
	if !all {
		for _, s := range cur.Sites {
			if !slices.Contains(names, s.Name) && !slices.Contains(names, s.ID) {
				next.Sites = append(next.Sites, s)
			}
		}
		if len(next.Sites) < 2 {
			next.Sites = nil
		}
	}
	var errs []error
	for _, s := range cur.Sites {
		if s.ID == e.cfg.SiteID {
			continue
		}
		p, err := e.cfg.Dial(s.Endpoint, Credentials{AccessKey: cur.ServiceAccessKey, SecretKey: cur.ServiceSecretKey})
		if err == nil {
			err = p.Join(ctx, next)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("site %s: %w", s.Name, err))
		}
	}
	if err := e.Join(ctx, next); err != nil {
		errs = append(errs, err)
	}
	return next, errors.Join(errs...)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
