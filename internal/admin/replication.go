package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/replication"
)

// ReplicationAdmin is the site replication engine as the admin API drives
// it; *replication.Engine implements it.
type ReplicationAdmin interface {
	Add(ctx context.Context, sites []replication.SiteSpec) (replication.State, error)
	State() replication.State
	Status(ctx context.Context) (replication.Status, error)
	Remove(ctx context.Context, names []string, all bool) (replication.State, error)
	ResyncStart(ctx context.Context, peer string) (replication.ResyncJob, error)
	ResyncStatus(ctx context.Context, peer string) (replication.ResyncJob, error)
	ResyncCancel(ctx context.Context, peer string) (replication.ResyncJob, error)
	BucketStatus(ctx context.Context, bucket string) (replication.BucketStatus, error)
	Backlog(ctx context.Context, bucket string, limit int) ([]replication.MRFEntry, error)
	LinkHistory() map[string][]replication.LinkSample
}

// replicationRoutes are the site replication calls.
var replicationRoutes = []route{
	{http.MethodPost, adminclient.PathReplicationSites, "admin.SiteReplicationAdd", (*Server).replicateAdd},
	{http.MethodDelete, adminclient.PathReplicationSites, "admin.SiteReplicationRemove", (*Server).replicateRemove},
	{http.MethodGet, adminclient.PathReplicationInfo, "admin.SiteReplicationInfo", (*Server).replicateInfo},
	{http.MethodGet, adminclient.PathReplicationStatus, "admin.SiteReplicationStatus", (*Server).replicateStatus},
	{http.MethodPost, adminclient.PathReplicationResync + "/{peer}", "admin.SiteReplicationResyncStart", (*Server).resync},
	{http.MethodGet, adminclient.PathReplicationResync + "/{peer}", "admin.SiteReplicationResyncStatus", (*Server).resync},
	{http.MethodDelete, adminclient.PathReplicationResync + "/{peer}", "admin.SiteReplicationResyncCancel", (*Server).resync},
	{http.MethodGet, adminclient.PathReplicationBuckets + "/{bucket}/status", "admin.BucketReplicationStatus", (*Server).bucketReplicationStatus},
	{http.MethodGet, adminclient.PathReplicationBuckets + "/{bucket}/backlog", "admin.BucketReplicationBacklog", (*Server).replicationBacklog},
	{http.MethodGet, adminclient.PathReplicationHistory, "admin.SiteReplicationHistory", (*Server).replicationHistory},
}

// replicationHistory answers every link's last hour of samples.
func (s *Server) replicationHistory(w http.ResponseWriter, r *http.Request, _ *call) error {
	return s.replCall(w, func(e ReplicationAdmin) error {
		out := map[string][]adminclient.LinkSample{}
		for name, samples := range e.LinkHistory() {
			conv := make([]adminclient.LinkSample, len(samples))
			for i, s := range samples {
				conv[i] = adminclient.LinkSample(s)
			}
			out[name] = conv
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	})
}

var errReplicationUnavailable = errors.New("this server runs without site replication")

// replCall runs fn with the engine; its error goes back to wrap, which
// answers it through the one error table.
func (s *Server) replCall(w http.ResponseWriter, fn func(ReplicationAdmin) error) error {
	err := errReplicationUnavailable
	if s.cfg.Replication != nil {
		err = fn(s.cfg.Replication)
	}
	return err
}

func infoOf(st replication.State) adminclient.ReplicationInfo {
	out := adminclient.ReplicationInfo{Enabled: st.Enabled(), Sites: peersOf(st.Sites)}
	if st.Enabled() {
		out.ServiceAccount = st.ServiceAccessKey
	}
	return out
}

func peersOf(sites []replication.Site) []adminclient.ReplicationPeer {
	out := make([]adminclient.ReplicationPeer, 0, len(sites))
	for _, p := range sites {
		out = append(out, adminclient.ReplicationPeer{Name: p.Name, Endpoint: p.Endpoint, DeploymentID: p.ID})
	}
	return out
}

func (s *Server) replicateAdd(w http.ResponseWriter, r *http.Request, c *call) error {
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	var req adminclient.ReplicationAddRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	specs := make([]replication.SiteSpec, len(req.Sites))
	names := make([]string, len(req.Sites))
	for i, st := range req.Sites {
		specs[i] = replication.SiteSpec{Name: st.Name, Endpoint: st.Endpoint, AccessKey: st.AccessKey, SecretKey: st.SecretKey}
		names[i] = st.Name
	}
	c.msg = "add sites " + strings.Join(names, ", ")
	return s.replCall(w, func(e ReplicationAdmin) error {
		st, err := e.Add(r.Context(), specs)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, infoOf(st))
		return nil
	})
}

func (s *Server) replicateRemove(w http.ResponseWriter, r *http.Request, c *call) error {
	q := r.URL.Query()
	all := q.Get("all") == "true"
	c.msg = "remove sites " + strings.Join(q["site"], ", ")
	if all {
		c.msg = "remove all sites"
	}
	return s.replCall(w, func(e ReplicationAdmin) error {
		st, err := e.Remove(r.Context(), q["site"], all)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, infoOf(st))
		return nil
	})
}

func (s *Server) replicateInfo(w http.ResponseWriter, r *http.Request, _ *call) error {
	return s.replCall(w, func(e ReplicationAdmin) error {
		writeJSON(w, http.StatusOK, infoOf(e.State()))
		return nil
	})
}

func targetsOf(ts []replication.TargetStatus) []adminclient.ReplicationTarget {
	out := make([]adminclient.ReplicationTarget, 0, len(ts))
	for _, t := range ts {
		out = append(out, adminclient.ReplicationTarget{Name: t.Name, DeploymentID: t.DeploymentID, Endpoint: t.Endpoint,
			Online: t.Online, Latency: t.Latency, Pending: t.Pending, PendingBytes: t.PendingBytes,
			Retrying: t.Retrying, RetryingBytes: t.RetryingBytes, Lag: t.Lag,
			IAMUnsupported: t.IAMUnsupported, IAMUnsupportedSince: t.IAMUnsupportedSince, LastContact: t.LastContact,
			LastError: t.LastError, LastErrorTime: t.LastErrorTime})
	}
	return out
}

func (s *Server) replicateStatus(w http.ResponseWriter, r *http.Request, _ *call) error {
	return s.replCall(w, func(e ReplicationAdmin) error {
		st, err := e.Status(r.Context())
		if err != nil {
			return err
		}
		out := adminclient.ReplicationStatus{Enabled: st.Enabled, Site: st.Site, Sites: peersOf(st.Sites),
			Targets: targetsOf(st.Targets), Unreachable: st.Unreachable, Buckets: []adminclient.ReplicationBucketSync{}, IAM: st.IAM,
			IAMUnsupported: st.IAMUnsupported}
		for _, b := range st.Buckets {
			out.Buckets = append(out.Buckets, adminclient.ReplicationBucketSync{Bucket: b.Bucket, Sites: b.Sites})
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	})
}

func (s *Server) resync(w http.ResponseWriter, r *http.Request, c *call) error {
	peer := r.PathValue("peer")
	c.msg = strings.ToLower(r.Method) + " resync to " + peer
	return s.replCall(w, func(e ReplicationAdmin) error {
		var job replication.ResyncJob
		var err error
		switch r.Method {
		case http.MethodPost:
			job, err = e.ResyncStart(r.Context(), peer)
		case http.MethodDelete:
			job, err = e.ResyncCancel(r.Context(), peer)
		default:
			job, err = e.ResyncStatus(r.Context(), peer)
		}
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, adminclient.ResyncStatus{ID: job.ID, Target: job.Target, State: job.State,
			Started: job.Started, Finished: job.Finished, Bucket: job.Bucket, Buckets: job.Buckets,
			Queued: job.Queued, Bytes: job.Bytes, LastError: job.LastError})
		return nil
	})
}

func (s *Server) bucketReplicationStatus(w http.ResponseWriter, r *http.Request, _ *call) error {
	return s.replCall(w, func(e ReplicationAdmin) error {
		st, err := e.BucketStatus(r.Context(), r.PathValue("bucket"))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, adminclient.BucketReplicationStatus{Bucket: st.Bucket, Targets: targetsOf(st.Targets)})
		return nil
	})
}

func (s *Server) replicationBacklog(w http.ResponseWriter, r *http.Request, _ *call) error {
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: limit %q", ErrBadRequest, v)
		}
		limit = n
	}
	return s.replCall(w, func(e ReplicationAdmin) error {
		entries, err := e.Backlog(r.Context(), r.PathValue("bucket"), limit)
		if err != nil {
			return err
		}
		out := make([]adminclient.BacklogEntry, 0, len(entries))
		for _, m := range entries {
			out = append(out, adminclient.BacklogEntry{Target: m.Target, Op: m.Op, Bucket: m.Bucket, Key: m.Key,
				VersionID: m.VersionID, Size: m.Size, RetryCount: m.RetryCount,
				FailedAt: time.Unix(0, m.FailedAt).UTC(), NextRetry: time.Unix(0, m.Due).UTC(), Error: m.Err})
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	})
}
