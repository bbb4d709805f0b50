package app

import (
	"context"
	"io"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/twinlake/twinlake/internal/admin"
	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/iam"
	"github.com/twinlake/twinlake/internal/iam/policy"
	"github.com/twinlake/twinlake/internal/metrics"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/s3api"
	"github.com/twinlake/twinlake/internal/s3api/sigv4"
)

// Version is reported by admin info; set at link time.
var Version = "dev"

// sigv4Auth authenticates admin and metrics calls with SigV4 over IAM.
type sigv4Auth struct {
	v   *sigv4.Verifier
	iam *iam.Store
}

func (a sigv4Auth) Authenticate(r *http.Request) (string, error) {
	res, err := a.v.Verify(r, "s3")
	if err != nil {
		return "", err
	}
	if res.Anonymous {
		return "", sigv4.ErrInvalidAccessKeyID
	}
	return res.AccessKey, nil
}

func (a sigv4Auth) IsAdmin(accessKey string) bool { return a.iam.IsAdmin(accessKey) }

// AllowAdmin implements admin.ActionAuthorizer: root, or a user or access
// key whose policies allow the admin action.
func (a sigv4Auth) AllowAdmin(accessKey, action string) bool {
	id, ok := a.iam.Identity(accessKey)
	return ok && id.Allowed(&policy.Request{Action: action, Resource: "arn:aws:s3:::*"})
}

// AllowAdminOn decides an action on one resource (a warehouse's s3tables:
// action on its ARN).
func (a sigv4Auth) AllowAdminOn(accessKey, action, resource string) bool {
	id, ok := a.iam.Identity(accessKey)
	return ok && id.Allowed(&policy.Request{Action: action, Resource: resource})
}

var (
	_ admin.ActionAuthorizer   = sigv4Auth{}
	_ admin.ResourceAuthorizer = sigv4Auth{}
)

// metricsAuth lets root and users allowed admin:Prometheus (the built-in
// diagnostics policy, say) read metrics.
type metricsAuth struct{ sigv4Auth }

func (a metricsAuth) IsAdmin(accessKey string) bool {
	return a.AllowAdmin(accessKey, "admin:Prometheus")
}

// peerAuth verifies peer API requests, body included.
type peerAuth struct{ sigv4Auth }

// IsAdmin lets only root (besides the service credential, which peerhttp
// checks itself) call the peer API: no user policy reaches it.
func (a peerAuth) IsAdmin(accessKey string) bool { return accessKey == a.iam.Root().AccessKey }

func (a peerAuth) Verify(r *http.Request) (string, io.ReadCloser, error) {
	res, err := a.v.Verify(r, "s3")
	if err != nil {
		return "", nil, err
	}
	if res.Anonymous {
		return "", nil, sigv4.ErrInvalidAccessKeyID
	}
	body := res.Body(r)
	// A version's data that the node of this site which received it
	// offered to write (node_write.go).
	p := s3api.OfferedPayload(r.Context(), body, res, s3api.DefaultBodyIdleTimeout, time.Now().Add(s3api.DefaultBodyDeadline))
	if eb, ok := p.(objects.ElsewhereBody); ok {
		return res.AccessKey, elsewhereCloser{eb, body}, nil
	}
	return res.AccessKey, body, nil
}

// elsewhereCloser is a body another node offered to write, closed as the
// request's.
type elsewhereCloser struct {
	objects.ElsewhereBody
	io.Closer
}

// nodesAndEtcd asks a multi-node site's nodes and its etcd's storage
// (each nil where the site has none) at once: each waits a little for
// what does not answer (a node paused).
func (s *Server) nodesAndEtcd(ctx context.Context) (nodes []adminclient.NodeInfo, etcd *adminclient.EtcdInfo) {
	var wg sync.WaitGroup
	if s.cfg.Etcd != nil {
		wg.Go(func() { etcd = s.cfg.Etcd(ctx) })
	}
	if s.cfg.Nodes != nil {
		wg.Go(func() { nodes = s.cfg.Nodes(ctx) })
	}
	wg.Wait()
	return nodes, etcd
}

// Info implements admin.InfoSource.
func (s *Server) Info(ctx context.Context) (adminclient.ServerInfo, error) {
	u := s.objects.Usage()
	info := adminclient.ServerInfo{
		DeploymentID: s.deploymentID, SiteName: s.cfg.SiteName, Version: Version,
		UptimeSeconds: int64(time.Since(s.started).Seconds()),
		Buckets:       int64(len(s.objects.ListBuckets(ctx))),
		Objects:       u.Objects, TotalBytes: u.Bytes,
	}
	info.CPUSeconds, info.PeakRSSBytes = metrics.ProcessUsage()
	if s.ln != nil {
		info.Address = s.ln.Addr().String()
	} else {
		info.Address = s.cfg.Address
	}
	info.Nodes, info.Etcd = s.nodesAndEtcd(ctx)
	if p := s.objects.HealProgress(); p != nil {
		info.Heal = &adminclient.HealInfo{Running: !p.Done, Percent: p.Percent(), Started: p.Started, ElapsedSecond: p.Elapsed.Seconds(),
			Versions: p.Versions, Parts: p.Parts, BlobFiles: p.BlobFiles, Degraded: p.Degraded,
			ShardsRebuilt: p.ShardsRebuilt, MissingCount: p.MissingCount}
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(s.cfg.Dir, &st); err == nil {
		info.DiskTotal = st.Blocks * uint64(st.Bsize)
		info.DiskFree = st.Bavail * uint64(st.Bsize)
	}
	info.DiskReserve = uint64(s.diskReserve())
	return info, nil
}
