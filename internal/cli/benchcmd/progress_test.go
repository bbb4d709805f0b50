package benchcmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/bench"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// TestRunPhaseReportsBytes: a phase's progress counts the bytes its
// operations moved (a PUT phase of 4 KiB objects printed 0B, 0B/s), and a
// phase that moves none reports none.
func TestRunPhaseReportsBytes(t *testing.T) {
	// Progress is printed only for a phase that outlasts a line's
	// interval: one every 10 ms, and the phase's last operation 200 ms.
	t.Setenv(cmdutil.ProgressIntervalEnv, "10ms")
	for _, tc := range []struct {
		perOp int64
		want  string
	}{
		{4096, "done, 3/3 objects, 12.0KiB"},
		{0, "done, 3/3 objects, 0B"},
	} {
		var out bytes.Buffer
		cmd := &cobra.Command{}
		cmd.SetErr(&out)
		res, err := runPhase(context.Background(), cmd, "PUT", bench.Config{Concurrency: 2, Count: 3}, tc.perOp,
			func(_ context.Context, seq int64) error {
				if seq == 2 {
					time.Sleep(200 * time.Millisecond)
				}
				return nil
			})
		if err != nil || res.Ops != 3 {
			t.Fatalf("phase: %+v, %v", res, err)
		}
		if !strings.Contains(out.String(), "bench PUT: "+tc.want) {
			t.Errorf("%d bytes an operation: progress %q, want %q", tc.perOp, out.String(), tc.want)
		}
	}
}
