package app

import (
	"context"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/objects"
)

// healer runs the object layer's heal scan for the admin API.
type healer struct{ l *objects.Layer }

func (h healer) HealScan(ctx context.Context, o adminclient.HealOptions) (adminclient.HealReport, error) {
	rep, err := h.l.HealScan(ctx, objects.HealOptions{DryRun: o.DryRun, RecordsPerSecond: o.Rate, Deep: o.Deep})
	if err != nil {
		return adminclient.HealReport{}, err
	}
	out := adminclient.HealReport{DryRun: rep.DryRun, Deep: rep.Deep, Drives: rep.Drives, Layout: rep.Layout,
		Degraded: rep.Degraded, ShardsRebuilt: rep.ShardsRebuilt,
		BlobFiles: rep.BlobFiles, Versions: rep.Versions, Parts: rep.Parts,
		InFlight: rep.InFlight, Orphans: rep.Orphans, OrphanBytes: rep.OrphanBytes, Removed: rep.Removed,
		MissingCount: rep.MissingCount}
	for _, m := range rep.Missing {
		out.Missing = append(out.Missing, adminclient.HealMissingBlob(m))
	}
	out.SetElapsed(rep.Elapsed)
	return out, nil
}
