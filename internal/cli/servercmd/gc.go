package servercmd

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/twinlake/twinlake/internal/bench"
	"github.com/twinlake/twinlake/internal/gctune"
)

// tuneGC starts the garbage collector's tuning (package gctune) with the
// headroom TWINLAKE_GC_HEADROOM gives (0 turns it off; with GOGC set the
// tuner leaves the operator's percent alone). The returned stop is never nil.
func tuneGC(log *slog.Logger) (stop func(), err error) {
	headroom := uint64(gctune.DefaultHeadroom)
	if v := os.Getenv("TWINLAKE_GC_HEADROOM"); v == "0" {
		headroom = 0
	} else if v != "" {
		n, err := bench.ParseSize(v)
		if err != nil || n < 0 || n > gctune.MaxHeadroom {
			return nil, fmt.Errorf("TWINLAKE_GC_HEADROOM %q: want a size from 0 (off) to 1GiB", v)
		}
		headroom = uint64(n)
	}
	if headroom == 0 {
		return func() {}, nil
	}
	t := gctune.Start(headroom)
	if !t.Active() {
		log.Debug("garbage collector left as GOGC sets it", "GOGC", os.Getenv("GOGC"))
	}
	return t.Stop, nil
}
