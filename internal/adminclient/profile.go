package adminclient

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"time"
)

// PathProfile is the admin call that takes a runtime profile of the server.
const PathProfile = "/twinlake/admin/v1/profile"

// Profile types.
const (
	ProfileCPU       = "cpu"
	ProfileHeap      = "heap"
	ProfileGoroutine = "goroutine"
	ProfileBlock     = "block"
	ProfileMutex     = "mutex"
)

// ProfileTypes lists the profile types, as --type takes them.
var ProfileTypes = []string{ProfileCPU, ProfileHeap, ProfileGoroutine, ProfileBlock, ProfileMutex}

// Bounds of a sampled profile's duration.
const (
	ProfileDefaultDuration = 10 * time.Second
	ProfileMinDuration     = time.Second
	ProfileMaxDuration     = 5 * time.Minute
)

// CodeProfileBusy (409): a CPU profile is already being taken.
const CodeProfileBusy = "ProfileBusy"

// Profile takes a profile of type typ, sampling for d where the type
// samples (cpu, block, mutex; 0: the server's default), and returns it in
// pprof's format.
func (c *Client) Profile(ctx context.Context, typ string, d time.Duration) ([]byte, error) {
	q := url.Values{"type": {typ}}
	if d > 0 {
		q.Set("duration", d.String())
	}
	resp, err := c.do(ctx, http.MethodGet, PathProfile, q, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
