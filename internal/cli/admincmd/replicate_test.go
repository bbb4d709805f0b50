package admincmd

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func TestReplicateOutputFormats(t *testing.T) {
	now := time.Date(2025, 1, 5, 10, 30, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		0: "0s", 412345 * time.Nanosecond: "412µs", 1234567 * time.Nanosecond: "1.23ms",
		1234567890 * time.Nanosecond: "1.23s", 90*time.Minute + 400*time.Millisecond: "1h30m0s",
	} {
		if got := cmdutil.FmtDuration(d); got != want {
			t.Errorf("fmtDuration(%v) = %q, want %q", d, got, want)
		}
	}
	out := backlogHuman([]adminclient.BacklogEntry{
		{Target: "site2", Op: "version", Bucket: "b", Key: "k", VersionID: "v1", RetryCount: 2, FailedAt: now.Add(-time.Minute),
			NextRetry: now.Add(2 * time.Second), Error: "refused: NoSuchBucket"},
		{Target: "site3", Op: "bucket", Bucket: "b", FailedAt: now, NextRetry: now},
	}, now)
	for _, w := range []string{"Peer   Op       Key  Version  Retries  Failed at", "site2  version  k    v1       2        2025-01-05 10:29:00 UTC  in 2s",
		"site3  bucket   -    -        0", "due now", "2 entries"} {
		if !strings.Contains(out, w) {
			t.Errorf("backlog output lacks %q:\n%s", w, out)
		}
	}
	err := replErr("admin replicate add a b", &adminclient.Error{Code: adminclient.CodeSiteHasData, Message: "x\ny", StatusCode: 409})
	var ae *adminclient.Error
	if !errors.As(err, &ae) || err.Error() != "admin replicate add a b: x y (SiteHasData, HTTP 409): "+replicationHints[adminclient.CodeSiteHasData] {
		t.Errorf("replErr = %q", err)
	}
}
