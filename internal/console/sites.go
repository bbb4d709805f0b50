package console

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// SiteView is one joined site on the Sites page.
type SiteView struct {
	Name         string    `json:"name"`
	Endpoint     string    `json:"endpoint"`
	DeploymentID string    `json:"deploymentID"`
	Local        bool      `json:"local"`
	Role         string    `json:"role"`  // primary, Tables replica, ... ("" when not readable)
	State        string    `json:"state"` // the scanner's state there
	Online       bool      `json:"online"`
	Error        string    `json:"error,omitempty"`
	LastContact  time.Time `json:"lastContact,omitzero"`
}

// LinkView is the link from this site to one peer.
type LinkView struct {
	Target        string  `json:"target"`
	Online        bool    `json:"online"`
	LatencyMs     float64 `json:"latencyMs"`
	Pending       int64   `json:"pending"`
	PendingBytes  int64   `json:"pendingBytes"`
	Retrying      int64   `json:"retrying"`
	RetryingBytes int64   `json:"retryingBytes"`
	LagSeconds    float64 `json:"lagSeconds"`
	// Dropped, SentBytes and Throughput come from the site's metrics; -1
	// when the user may not read them (admin:Prometheus).
	Dropped    int64   `json:"dropped"`
	SentBytes  int64   `json:"sentBytes"`
	Throughput float64 `json:"throughput"`
}

// SitesView answers GET /api/sites.
type SitesView struct {
	Enabled bool                `json:"enabled"`
	Site    string              `json:"site"`
	Sites   []SiteView          `json:"sites"`
	Links   []LinkView          `json:"links"`
	History map[string][]Sample `json:"history"`
	// seed is the site's own link history, read when a link is new to
	// this console's rings.
	seed    map[string][]Sample
	Sampled time.Time `json:"sampled"`
	// StepSeconds is the sampling step: polling faster gains nothing.
	StepSeconds int64 `json:"stepSeconds"`
}

// Admin actions the Sites page needs, as the admin routes name them.
const (
	actionReplicationInfo = "admin:SiteReplicationInfo"
	actionTablesInfo      = "admin:TablesReplicationInfo"
	actionMetrics         = "admin:Prometheus"
)

func (c *Console) sites(w http.ResponseWriter, r *http.Request, cl *call) error {
	ak := cl.sess.accessKey
	if !c.cfg.Authorizer.AllowAdmin(ak, actionReplicationInfo) {
		return fmt.Errorf("%w: the Sites page needs %s", errForbidden, actionReplicationInfo)
	}
	v, err := c.history.snapshot(func() (*SitesView, error) { return c.takeSites(cl) })
	if err != nil {
		return err
	}
	out := *v
	if !c.cfg.Authorizer.AllowAdmin(ak, actionTablesInfo) {
		out.Sites = append([]SiteView(nil), v.Sites...)
		for i := range out.Sites {
			out.Sites[i].Role, out.Sites[i].State = "", ""
		}
	}
	if !c.cfg.Authorizer.AllowAdmin(ak, actionMetrics) {
		out.Links = append([]LinkView(nil), v.Links...)
		for i := range out.Links {
			out.Links[i].Dropped, out.Links[i].SentBytes, out.Links[i].Throughput = -1, -1, 0
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// takeSites reads replication status, every site's role and the link
// counters, as the polling user.
func (c *Console) takeSites(cl *call) (*SitesView, error) {
	ctx, cancel := context.WithTimeout(cl.ctx, 10*time.Second)
	defer cancel()
	st, err := cl.cl.admin.ReplicateStatus(ctx)
	if err != nil {
		return nil, err
	}
	v := &SitesView{Enabled: st.Enabled, Site: st.Site, Sampled: time.Now().UTC(), StepSeconds: int64(PollInterval / time.Second)}
	unreachable := map[string]bool{}
	for _, u := range st.Unreachable {
		unreachable[u] = true
	}
	counters := c.linkCounters(ctx, cl)
	// The link monitor's last answered probe, kept since the site started
	// whether or not anyone was looking.
	contact := map[string]time.Time{}
	for _, t := range st.Targets {
		contact[t.Name] = t.LastContact
		l := LinkView{Target: t.Name, Online: t.Online, LatencyMs: float64(t.Latency) / float64(time.Millisecond),
			Pending: t.Pending, PendingBytes: t.PendingBytes, Retrying: t.Retrying, RetryingBytes: t.RetryingBytes,
			LagSeconds: t.Lag.Seconds(), Dropped: -1, SentBytes: -1}
		if counters != nil {
			l.Dropped, l.SentBytes = int64(counters[t.Name].dropped), int64(counters[t.Name].sent)
		}
		v.Links = append(v.Links, l)
	}
	names := make([]string, len(v.Links))
	for i, l := range v.Links {
		names[i] = l.Target
	}
	if c.history.unseen(names) {
		if hist, err := cl.cl.admin.ReplicationHistory(ctx); err == nil {
			v.seed = map[string][]Sample{}
			for name, samples := range hist {
				for _, s := range samples {
					v.seed[name] = append(v.seed[name], Sample{Time: s.Time, LagSeconds: s.Lag.Seconds(),
						Backlog: s.Pending + s.Retrying, BacklogBytes: s.PendingBytes + s.RetryingBytes, SentBytes: -1})
				}
			}
		}
	}
	if !st.Enabled {
		v.Sites = []SiteView{{Name: st.Site, Local: true, Online: true}}
		v.Sites[0].Role, v.Sites[0].State, v.Sites[0].Error = roleOf(ctx, cl.cl.admin)
		return v, nil
	}
	v.Sites = make([]SiteView, len(st.Sites))
	var wg sync.WaitGroup
	for i, p := range st.Sites {
		sv := SiteView{Name: p.Name, Endpoint: p.Endpoint, DeploymentID: p.DeploymentID, Local: p.Name == st.Site,
			LastContact: contact[p.Name]}
		sv.Online = sv.Local || !unreachable[p.Name]
		v.Sites[i] = sv
		wg.Go(func() {
			adm := cl.cl.admin
			if !sv.Local {
				var err error
				adm, err = adminclient.New(p.Endpoint, cl.cl.creds, adminclient.Config{HTTPClient: c.cfg.PeerClient, UserAgent: "twinlake-console"})
				if err != nil {
					v.Sites[i].Error = err.Error()
					return
				}
			}
			rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			v.Sites[i].Role, v.Sites[i].State, v.Sites[i].Error = roleOf(rctx, adm)
		})
	}
	wg.Wait()
	return v, nil
}

// roleOf reads a site's Tables role from its table replicate status.
func roleOf(ctx context.Context, adm *adminclient.Client) (role, state, errMsg string) {
	st, err := adm.TablesReplicationStatus(ctx, 0, 1)
	if err != nil {
		return "", "", err.Error()
	}
	return roleName(st), st.State, ""
}

// roleName names a site's Tables role as the runbook does.
func roleName(st adminclient.TablesReplicationStatus) string {
	switch {
	case st.Promoting:
		return "Tables replica, being promoted"
	case st.Window:
		return "primary being demoted (resync window open)"
	case st.State == "disabled":
		return "primary"
	}
	return "Tables replica"
}

type linkCounter struct{ dropped, sent float64 }

// linkCounters reads the dropped and sent-bytes counters per link from the
// site's metrics, as the user (nil when the user may not read metrics).
func (c *Console) linkCounters(ctx context.Context, cl *call) map[string]linkCounter {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+backendHost+"/twinlake/metrics", nil)
	if err != nil {
		return nil
	}
	empty := sha256.Sum256(nil)
	hash := hex.EncodeToString(empty[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	creds := aws.Credentials{AccessKeyID: cl.cl.creds.AccessKey, SecretAccessKey: cl.cl.creds.SecretKey}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hash, "s3", region, time.Now().UTC()); err != nil {
		return nil
	}
	resp, err := cl.cl.http.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	out := map[string]linkCounter{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, target, val, ok := parseTargetSample(sc.Text())
		if !ok {
			continue
		}
		lc := out[target]
		switch name {
		case "twinlake_replication_dropped_objects_total":
			lc.dropped = val
		case "twinlake_replication_sent_bytes_total":
			lc.sent = val
		default:
			continue
		}
		out[target] = lc
	}
	return out
}

// parseTargetSample parses a text-format sample line name{target="x"} v.
func parseTargetSample(line string) (name, target string, val float64, ok bool) {
	if strings.HasPrefix(line, "#") {
		return "", "", 0, false
	}
	open := strings.IndexByte(line, '{')
	end := strings.LastIndexByte(line, '}')
	if open < 0 || end < open {
		return "", "", 0, false
	}
	name = line[:open]
	labels := line[open+1 : end]
	const key = `target="`
	i := strings.Index(labels, key)
	if i < 0 {
		return "", "", 0, false
	}
	rest := labels[i+len(key):]
	j := strings.IndexByte(rest, '"')
	if j < 0 {
		return "", "", 0, false
	}
	target = rest[:j]
	v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
	if err != nil {
		return "", "", 0, false
	}
	return name, target, v, true
}
