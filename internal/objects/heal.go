package objects

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/twinlake/twinlake/internal/blob"
	"github.com/twinlake/twinlake/internal/erasure"
	"github.com/twinlake/twinlake/internal/meta"
)

// HealProgress is the latest heal scan's report so far: while it runs, the
// counts up to now; once Done, its result.
type HealProgress struct {
	Started time.Time
	Done    bool
	HealReport
}

// Percent estimates how far the scan is: the referenced blobs checked
// out of the blob files found, 99 at most until it is done.
func (p *HealProgress) Percent() int {
	switch {
	case p.Done:
		return 100
	case p.BlobFiles == 0:
		return 0
	}
	return int(min(99, 100*p.Checked/p.BlobFiles))
}

// HealProgress returns the latest heal scan's progress, or nil if none
// ran since the layer opened.
func (l *Layer) HealProgress() *HealProgress { return l.heal.Load() }

// HealOptions bound a full check of the blob tree against the metadata.
type HealOptions struct {
	// DryRun reports what would be repaired and changes nothing.
	DryRun bool
	// RecordsPerSecond caps how fast metadata records and blob files are
	// read, so the check never crowds out serving; 0 means no cap.
	RecordsPerSecond int
	// Deep reads every shard of every referenced blob through its
	// checksums (a drive set only); otherwise a shard counts as sound
	// when its file is there with the right length.
	Deep bool
}

// MissingBlob is a blob file that a version or an uploaded part names but
// that is not on disk: its data is lost on this site.
type MissingBlob struct {
	Bucket    string `json:"bucket"`
	Key       string `json:"key"`
	VersionID string `json:"versionId,omitempty"`
	UploadID  string `json:"uploadId,omitempty"`
	BlobID    string `json:"blobId"`
}

// maxReportedMissing bounds the missing blobs a report lists (all are
// counted).
const maxReportedMissing = 1000

// HealReport is what a check found and did.
type HealReport struct {
	DryRun        bool          `json:"dryRun,omitempty"`
	Deep          bool          `json:"deep,omitempty"`
	Drives        int           `json:"drives"`
	Layout        string        `json:"layout"`        // the drive set's erasure layout
	Degraded      int64         `json:"degraded"`      // referenced blobs with a shard missing or corrupt
	Unanswered    int64         `json:"unanswered"`    // referenced blobs with a shard on a drive that did not answer, not checked there
	ShardsRebuilt int64         `json:"shardsRebuilt"` // shards written again (0 on a dry run)
	BlobFiles     int64         `json:"blobFiles"`     // files in the blob tree
	Checked       int64         `json:"checked"`       // referenced blobs checked
	Versions      int64         `json:"versions"`      // version records read
	Parts         int64         `json:"parts"`         // uploaded part records read
	InFlight      int64         `json:"inFlight"`      // unreferenced files a write in progress owns (an intent)
	Orphans       int64         `json:"orphans"`       // unreferenced files no write owns
	OrphanBytes   int64         `json:"orphanBytes"`   // their size
	Removed       int64         `json:"removed"`       // orphans removed (0 on a dry run)
	MissingCount  int64         `json:"missingCount"`  // referenced files not on disk
	Missing       []MissingBlob `json:"missing,omitempty"`
	Elapsed       time.Duration `json:"-"`
}

// HealScan compares every blob file with the metadata that references
// blobs: it removes the files nothing references and no write in progress
// owns, and reports referenced files that are missing. It takes no lock and
// blocks no request: reads go at most opts.RecordsPerSecond.
//
// Writes go on meanwhile, and the order of the reads keeps them safe: the
// blob tree is listed first, then the intents, then the parts, then the
// versions. A file listed was either already referenced, or owned by an
// intent (written before the file was created and deleted only in the batch
// that references the file). A reference moves from intent to part to
// version, the order the reads follow, so a file referenced throughout is
// seen in one of them. A candidate's intent is read once more just before
// its file is removed.
func (l *Layer) HealScan(ctx context.Context, opts HealOptions) (HealReport, error) {
	start := time.Now()
	var progressed int
	progress := func(rep *HealReport, done bool) {
		if progressed++; done || progressed%256 == 0 {
			snap := HealProgress{Started: start, Done: done, HealReport: *rep}
			snap.Missing = nil
			snap.Elapsed = time.Since(start)
			l.heal.Store(&snap)
		}
	}
	rep := HealReport{DryRun: opts.DryRun, Deep: opts.Deep, Drives: l.blobs.Drives(), Layout: l.blobs.Layout().String()}
	pace := newPacer(opts.RecordsPerSecond)
	// A drive that does not answer (its node paused) is marked so, and
	// the scan leaves it out instead of waiting for each of its calls.
	l.blobs.DriveErrors()
	files := map[string]bool{}
	if err := l.blobs.Walk(func(id string) bool {
		files[id] = true
		return pace.wait(ctx) == nil
	}); err != nil {
		return rep, err
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	rep.BlobFiles = int64(len(files))
	owned, err := l.scanIntents(ctx, pace)
	if err != nil {
		return rep, err
	}
	used := map[string]bool{}
	check := func(id string, m MissingBlob) {
		if !used[id] {
			rep.Checked++
		}
		used[id] = true
		if (files[id] || l.blobExists(id)) && l.healShards(id, opts, &rep) {
			return
		}
		rep.MissingCount++
		if len(rep.Missing) < maxReportedMissing {
			m.BlobID = id
			rep.Missing = append(rep.Missing, m)
		}
	}
	lo := []byte(pfxPart)
	err = meta.Scan(l.meta, lo, meta.PrefixEnd(lo), func(k, raw []byte) (bool, error) {
		rep.Parts++
		progress(&rep, false)
		var part Part
		if err := decode(raw, &part); err != nil {
			return false, err
		}
		if id := part.Segment.BlobID; id != "" {
			uploadID, _, _ := bytes.Cut(k[len(pfxPart):], []byte{0})
			check(id, MissingBlob{UploadID: string(uploadID)})
		}
		return true, pace.wait(ctx)
	})
	if err != nil {
		return rep, err
	}
	lo = []byte(pfxVersion)
	err = meta.Scan(l.meta, lo, meta.PrefixEnd(lo), func(k, raw []byte) (bool, error) {
		rep.Versions++
		progress(&rep, false)
		bucket, key, _ := splitAnyVersionKey(k)
		v := &Version{}
		if err := decode(raw, v); err != nil {
			return false, err
		}
		for _, s := range v.Segments {
			if s.BlobID != "" {
				check(s.BlobID, MissingBlob{Bucket: bucket, Key: key, VersionID: v.VersionID})
			}
		}
		return true, pace.wait(ctx)
	})
	if err != nil {
		return rep, err
	}
	for id := range files {
		if used[id] {
			continue
		}
		if owned[id] || l.intentExists(id) {
			rep.InFlight++
			continue
		}
		rep.Orphans++
		rep.OrphanBytes += l.blobSize(id)
		if opts.DryRun {
			continue
		}
		if err := l.blobs.Remove(id); err != nil {
			return rep, err
		}
		rep.Removed++
	}
	rep.Elapsed = time.Since(start)
	progress(&rep, true)
	if rep.Orphans > 0 || rep.MissingCount > 0 || rep.Degraded > 0 {
		l.log.Warn("heal scan", "orphans", rep.Orphans, "removed", rep.Removed, "missing", rep.MissingCount,
			"degraded", rep.Degraded, "shardsRebuilt", rep.ShardsRebuilt, "dryRun", opts.DryRun)
	}
	return rep, nil
}

// healShards checks a referenced blob's shards on a drive set and
// rebuilds those missing or corrupt; it reports false when too few are
// sound to rebuild the blob: its data is lost on this site.
func (l *Layer) healShards(id string, opts HealOptions, rep *HealReport) bool {
	if l.blobs.Drives() == 1 {
		return true
	}
	res, err := l.blobs.Heal(id, opts.Deep, opts.DryRun)
	if len(res.Bad) > 0 {
		rep.Degraded++
	}
	if len(res.Unanswered) > 0 {
		rep.Unanswered++
	}
	rep.ShardsRebuilt += int64(res.Rebuilt)
	switch {
	case errors.Is(err, erasure.ErrReadQuorum):
		return false
	case err != nil:
		l.log.Warn("heal: shards not rebuilt", "blob", id, "err", err)
	}
	return true
}

func (l *Layer) scanIntents(ctx context.Context, pace *pacer) (map[string]bool, error) {
	owned := map[string]bool{}
	lo := []byte(pfxIntent)
	err := meta.Scan(l.meta, lo, meta.PrefixEnd(lo), func(k, _ []byte) (bool, error) {
		owned[string(k[len(pfxIntent):])] = true
		return true, pace.wait(ctx)
	})
	return owned, err
}

func (l *Layer) intentExists(id string) bool {
	_, err := l.meta.Get(intentKey(id))
	return err == nil
}

func (l *Layer) blobExists(id string) bool {
	f, err := l.blobs.Open(id)
	if err != nil {
		return !errors.Is(err, blob.ErrNotFound)
	}
	f.Close()
	return true
}

func (l *Layer) blobSize(id string) int64 {
	f, err := l.blobs.Open(id)
	if err != nil {
		return 0
	}
	defer f.Close()
	return f.Size()
}

// pacer spaces reads to at most perSecond, in steps of a tenth of a
// second so that it sleeps rarely.
type pacer struct {
	step  int
	n     int
	start time.Time
	every time.Duration
}

func newPacer(perSecond int) *pacer {
	if perSecond <= 0 {
		return &pacer{}
	}
	step := max(perSecond/10, 1)
	return &pacer{step: step, start: time.Now(), every: time.Duration(float64(time.Second) * float64(step) / float64(perSecond))}
}

// wait counts one read and sleeps when the reads are ahead of the pace; it
// returns ctx's error once ctx is done.
func (p *pacer) wait(ctx context.Context) error {
	if p.step == 0 {
		return ctx.Err()
	}
	p.n++
	if p.n%p.step != 0 {
		return nil
	}
	due := p.start.Add(time.Duration(p.n/p.step) * p.every)
	if d := time.Until(due); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	return ctx.Err()
}
