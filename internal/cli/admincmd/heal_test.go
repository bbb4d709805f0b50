package admincmd

import (
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// TestHealFailure: only a scan that checked everything and found nothing
// lost exits cleanly; lost data is named first, then blobs left unchecked
// on drives that did not answer.
func TestHealFailure(t *testing.T) {
	for _, c := range []struct {
		rep  adminclient.HealReport
		want string // "" for no error
	}{
		{adminclient.HealReport{BlobFiles: 10, Degraded: 2, ShardsRebuilt: 2}, ""},
		{adminclient.HealReport{Unanswered: 3}, "3 blobs were not checked on s1's drives that did not answer"},
		{adminclient.HealReport{MissingCount: 1, Unanswered: 3}, "1 blob files that versions or parts reference are missing on s1"},
	} {
		err := healFailure("s1", c.rep)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v, want none", c.rep, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: %v, want %q", c.rep, err, c.want)
		}
	}
}
