package app

import (
	"context"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/objects"
)

// healer runs the object layer's heal scan for the admin API.
type healer struct{ s *Server }

// HealScan runs a heal scan; on a drive set it first marks the drives put
// in place empty, as the drive watcher does on its next look, so that
// the drives the scan rebuilds are claimed too.
func (h healer) HealScan(ctx context.Context, o adminclient.HealOptions) (adminclient.HealReport, error) {
	if h.s.blobs.Drives() > 1 && !o.DryRun {
		if _, _, err := h.s.blobs.Claim(h.s.deploymentID); err != nil {
			return adminclient.HealReport{}, err
		}
	}
	rep, err := h.s.objects.HealScan(ctx, objects.HealOptions{DryRun: o.DryRun, RecordsPerSecond: o.Rate, Deep: o.Deep})
	if err != nil {
		return adminclient.HealReport{}, err
	}
	out := adminclient.HealReport{DryRun: rep.DryRun, Deep: rep.Deep, Drives: rep.Drives, Layout: rep.Layout,
		Degraded: rep.Degraded, Unanswered: rep.Unanswered, ShardsRebuilt: rep.ShardsRebuilt,
		BlobFiles: rep.BlobFiles, Checked: rep.Checked, Versions: rep.Versions, Parts: rep.Parts,
		InFlight: rep.InFlight, Orphans: rep.Orphans, OrphanBytes: rep.OrphanBytes, Removed: rep.Removed,
		MissingCount: rep.MissingCount}
	for _, m := range rep.Missing {
		out.Missing = append(out.Missing, adminclient.HealMissingBlob(m))
	}
	out.SetElapsed(rep.Elapsed)
	return out, nil
}
