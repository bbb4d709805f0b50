package admincmd

import (
	"testing"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// TestDiskLine: admin info tells the reserve kept free, and says so when
// the site is down to it and refuses new data; a site that reports no
// reserve (an older build) gets the line it had.
func TestDiskLine(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		free, total, reserve uint64
		want                 string
	}{
		{60 * gib, 100 * gib, 0, "60.0GiB free of 100.0GiB"},
		{60 * gib, 100 * gib, gib, "60.0GiB free of 100.0GiB (1.0GiB kept free)"},
		{gib / 2, 100 * gib, gib, "512.0MiB free of 100.0GiB, down to the 1.0GiB kept free: new data is refused"},
	} {
		if got := diskLine(adminclient.ServerInfo{DiskFree: c.free, DiskTotal: c.total, DiskReserve: c.reserve}); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
