package replication

import (
	"context"
	"sort"
	"time"

	"github.com/twinlake/twinlake/internal/meta"
)

// TargetStatus is the state of the link and backlog to one peer.
type TargetStatus struct {
	Name          string        `json:"name"`
	DeploymentID  string        `json:"deploymentID"`
	Endpoint      string        `json:"endpoint"`
	Online        bool          `json:"online"`
	Latency       time.Duration `json:"latency"`
	Pending       int64         `json:"pending"`
	PendingBytes  int64         `json:"pendingBytes"`
	Retrying      int64         `json:"retrying"`
	RetryingBytes int64         `json:"retryingBytes"`
	// Lag is the age of the oldest change still waiting for this peer.
	Lag time.Duration `json:"lag"`
	// LastContact is when the peer last answered the link's health probe
	// (zero: not since this site started).
	LastContact time.Time `json:"lastContact,omitzero"`
	// LastError is why the last send to the peer failed, and
	// LastErrorTime when, while the retry queue holds entries: what they
	// are waiting on (a refusal, an unreachable peer).
	LastError     string    `json:"lastError,omitempty"`
	LastErrorTime time.Time `json:"lastErrorTime,omitzero"`
	// IAMUnsupported is set while the peer takes no IAM records (an older
	// build answered NoSuchCall): IAM changes wait for its upgrade,
	// counted in Pending, spending no retry. IAMUnsupportedSince is the
	// first such answer.
	IAMUnsupported      bool      `json:"iamUnsupported,omitempty"`
	IAMUnsupportedSince time.Time `json:"iamUnsupportedSince,omitzero"`
}

// BucketSync says, per bucket, which sites hold it with the same settings.
type BucketSync struct {
	Bucket string          `json:"bucket"`
	Sites  map[string]bool `json:"sites"` // site name -> present with equal settings
}

// Status is the site replication status as seen from this site.
type Status struct {
	Enabled bool           `json:"enabled"`
	Site    string         `json:"site"`
	Sites   []Site         `json:"sites"`
	Targets []TargetStatus `json:"targets"`
	Buckets []BucketSync   `json:"buckets"`
	// Unreachable lists sites whose bucket settings could not be compared.
	Unreachable []string `json:"unreachable,omitempty"`
	// IAM says, per reachable site, whether it holds the same IAM records
	// (same versions, tombstones included) as this site. A site that
	// predates IAM replication reports false.
	IAM map[string]bool `json:"iam,omitempty"`
	// IAMUnsupported lists the sites IAM cannot replicate to: an older
	// build that refused an IAM record (NoSuchCall) or whose info carries
	// no IAM digest. Their IAM changes wait for the upgrade.
	IAMUnsupported []string `json:"iamUnsupported,omitempty"`
}

func (e *Engine) siteName() string {
	for _, s := range e.state.Load().Sites {
		if s.ID == e.cfg.SiteID {
			return s.Name
		}
	}
	return e.cfg.SiteName
}

// Status reports every peer's link and backlog, and whether buckets and
// their settings are the same on every site.
func (e *Engine) Status(ctx context.Context) (Status, error) {
	st := e.state.Load()
	out := Status{Enabled: st.Enabled(), Site: e.siteName(), Sites: st.Sites}
	if !st.Enabled() {
		return out, nil
	}
	local := e.LocalInfo(ctx)
	fps := map[string]map[string]string{out.Site: local.BucketConfig}
	out.IAM = map[string]bool{out.Site: true}
	for _, t := range *e.targets.Load() {
		ts := t.status()
		out.Targets = append(out.Targets, ts)
		if ts.IAMUnsupported {
			out.IAMUnsupported = append(out.IAMUnsupported, t.site.Name)
		}
		if !t.online() {
			out.Unreachable = append(out.Unreachable, t.site.Name)
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, err := t.peer.Info(cctx)
		cancel()
		if err != nil {
			out.Unreachable = append(out.Unreachable, t.site.Name)
			continue
		}
		fps[t.site.Name] = info.BucketConfig
		out.IAM[t.site.Name] = info.IAMDigest == local.IAMDigest
		if info.IAMDigest == "" && e.iam != nil && !ts.IAMUnsupported {
			out.IAMUnsupported = append(out.IAMUnsupported, t.site.Name) // a build that predates IAM replication
		}
	}
	names := map[string]bool{}
	for _, m := range fps {
		for b := range m {
			names[b] = true
		}
	}
	for b := range names {
		bs := BucketSync{Bucket: b, Sites: map[string]bool{}}
		want := local.BucketConfig[b]
		for site, m := range fps {
			got, ok := m[b]
			bs.Sites[site] = ok && want != "" && got == want
		}
		out.Buckets = append(out.Buckets, bs)
	}
	sort.Slice(out.Buckets, func(i, j int) bool { return out.Buckets[i].Bucket < out.Buckets[j].Bucket })
	return out, nil
}

func (t *target) status() TargetStatus {
	p, r := t.snapshot()
	refused, since, _ := t.iam.state()
	st := TargetStatus{Name: t.site.Name, DeploymentID: t.site.ID, Endpoint: t.site.Endpoint,
		Online: t.online(), Latency: time.Duration(t.latency.Load()),
		Pending: p.n, PendingBytes: p.bytes, Retrying: r.n, RetryingBytes: r.bytes, Lag: t.oldestPending(),
		IAMUnsupported: refused, IAMUnsupportedSince: since, LastContact: unixNanoTime(t.lastOK.Load())}
	if f := t.lastFail.Load(); f != nil && r.n > 0 {
		st.LastError, st.LastErrorTime = f.err, f.at
	}
	return st
}

// unixNanoTime is the time of ns, or the zero time for 0.
func unixNanoTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// BucketStatus is one bucket's backlog per peer.
type BucketStatus struct {
	Bucket  string         `json:"bucket"`
	Targets []TargetStatus `json:"targets"`
}

// BucketStatus reports the work waiting for each peer in one bucket.
func (e *Engine) BucketStatus(ctx context.Context, bucket string) (BucketStatus, error) {
	if _, err := e.cfg.Objects.Bucket(ctx, bucket); err != nil {
		return BucketStatus{}, err
	}
	out := BucketStatus{Bucket: bucket}
	for _, t := range *e.targets.Load() {
		ts := t.status()
		p, r := t.bucketSnapshot(bucket)
		ts.Pending, ts.PendingBytes, ts.Retrying, ts.RetryingBytes = p.n, p.bytes, r.n, r.bytes
		out.Targets = append(out.Targets, ts)
	}
	return out, nil
}

// Backlog lists the retry queue entries of one bucket (every peer), oldest
// due first, without consuming them; limit bounds the answer (0: 1000).
func (e *Engine) Backlog(ctx context.Context, bucket string, limit int) ([]MRFEntry, error) {
	if _, err := e.cfg.Objects.Bucket(ctx, bucket); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 1000
	}
	var out []MRFEntry
	for _, t := range *e.targets.Load() {
		// Each peer's queue is ordered by due time: its first limit
		// entries of the bucket are all any answer can need.
		n := 0
		p := mrfPrefix(t.site.ID)
		err := meta.Scan(e.cfg.Meta, p, meta.PrefixEnd(p), func(k, v []byte) (bool, error) {
			var m MRFEntry
			if err := decode(v, &m); err != nil {
				return false, err
			}
			if m.Bucket == bucket {
				m.Target = t.site.Name
				out = append(out, m)
				n++
			}
			return n < limit, nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Due < out[j].Due })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
