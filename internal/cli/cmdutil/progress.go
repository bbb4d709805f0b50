package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
)

// ProgressIntervalEnv sets how often progress is reported when standard
// error is not a terminal (default 5s, from 10ms to 1h); on a terminal the
// bar is redrawn every 200ms.
const ProgressIntervalEnv = "TWINLAKE_PROGRESS_INTERVAL"

const (
	barInterval          = 200 * time.Millisecond
	defaultLineInterval  = 5 * time.Second
	minProgressInterval  = 10 * time.Millisecond
	maxProgressInterval  = time.Hour
	progressBarCells     = 24
	progressShowAfter    = time.Second // a bar appears only for what takes longer
	progressTerminalWide = 100
)

type progressMode int

const (
	progressOff   progressMode = iota
	progressBar                // a terminal: one line redrawn in place
	progressLines              // not a terminal: a plain line per interval
	progressJSON               // --json: a JSON object per interval
)

// Progress reports how far a long operation is, on standard error so that
// standard output keeps only results: a bar redrawn in place on a terminal
// (bytes, rate, ETA, objects done of total), a plain line every few seconds
// otherwise, a JSON line with --json; --quiet silences it. Counters are
// safe for concurrent workers. The zero totals mean "not known (yet)".
type Progress struct {
	w        io.Writer
	mode     progressMode
	op       string
	start    time.Time
	interval time.Duration

	bytes, totalBytes     atomic.Int64
	objects, totalObjects atomic.Int64

	stop    chan struct{}
	done    sync.WaitGroup
	mu      sync.Mutex // serialises writes
	printed bool       // something was shown, so Finish closes it
}

// StartProgress starts reporting op (for example "cp") for cmd. A nil opts
// reads --json and --quiet from cmd's flags.
func StartProgress(cmd *cobra.Command, opts *Options, op string) *Progress {
	if opts == nil {
		opts = &Options{}
		opts.JSON, _ = cmd.Flags().GetBool("json")
		opts.Quiet, _ = cmd.Flags().GetBool("quiet")
	}
	w := cmd.ErrOrStderr()
	p := &Progress{w: w, op: op, start: time.Now(), stop: make(chan struct{})}
	switch {
	case opts.Quiet:
		p.mode = progressOff
	case opts.JSON:
		p.mode = progressJSON
	case isTerminal(w):
		p.mode = progressBar
	default:
		p.mode = progressLines
	}
	if p.mode == progressOff {
		return p
	}
	p.interval = barInterval
	if p.mode != progressBar {
		p.interval = progressInterval()
	}
	p.done.Add(1)
	go p.loop()
	return p
}

// progressInterval reads ProgressIntervalEnv within its bounds.
func progressInterval() time.Duration {
	d, err := time.ParseDuration(os.Getenv(ProgressIntervalEnv))
	if err != nil {
		return defaultLineInterval
	}
	return min(max(d, minProgressInterval), maxProgressInterval)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// SetTotal records what the whole operation covers, when it is known.
func (p *Progress) SetTotal(objects, bytes int64) {
	if p == nil {
		return
	}
	p.totalObjects.Store(objects)
	p.totalBytes.Store(bytes)
}

// AddTotal grows the totals as a walk discovers more work.
func (p *Progress) AddTotal(objects, bytes int64) {
	if p == nil {
		return
	}
	p.totalObjects.Add(objects)
	p.totalBytes.Add(bytes)
}

// AddBytes counts n bytes transferred.
func (p *Progress) AddBytes(n int64) {
	if p != nil {
		p.bytes.Add(n)
	}
}

// ObjectDone counts one object finished.
func (p *Progress) ObjectDone() {
	if p != nil {
		p.objects.Add(1)
	}
}

// Reader counts the bytes read through r.
func (p *Progress) Reader(r io.Reader) io.Reader {
	if p == nil || p.mode == progressOff {
		return r
	}
	return progressReader{r: r, p: p}
}

// Hook is an io.Reader for minio-go's PutObjectOptions.Progress: the client
// reads from it as many bytes as it has sent.
// It is nil when nothing is reported.
func (p *Progress) Hook() io.Reader {
	if p == nil || p.mode == progressOff {
		return nil
	}
	return progressHook{p: p}
}

type progressReader struct {
	r io.Reader
	p *Progress
}

func (r progressReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.p.AddBytes(int64(n))
	return n, err
}

type progressHook struct{ p *Progress }

func (h progressHook) Read(b []byte) (int, error) {
	h.p.AddBytes(int64(len(b)))
	return len(b), nil
}

// Finish stops reporting; what was shown ends with the final figures.
func (p *Progress) Finish() {
	if p == nil || p.mode == progressOff {
		return
	}
	close(p.stop)
	p.done.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.printed {
		return
	}
	p.write(time.Since(p.start), true)
}

func (p *Progress) loop() {
	defer p.done.Done()
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			elapsed := time.Since(p.start)
			if p.mode == progressBar && elapsed < progressShowAfter {
				continue
			}
			p.mu.Lock()
			p.write(elapsed, false)
			p.printed = true
			p.mu.Unlock()
		}
	}
}

// ProgressReport is one progress line as --json prints it.
type ProgressReport struct {
	Status         string  `json:"status"` // "progress", or "done" for the last line
	Operation      string  `json:"operation"`
	Objects        int64   `json:"objects"`
	TotalObjects   int64   `json:"totalObjects,omitempty"`
	Bytes          int64   `json:"bytes"`
	TotalBytes     int64   `json:"totalBytes,omitempty"`
	BytesPerSecond float64 `json:"bytesPerSecond"`
	Elapsed        string  `json:"elapsed"`
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	ETA            string  `json:"eta,omitempty"`
	ETASeconds     float64 `json:"etaSeconds,omitempty"`
}

func (p *Progress) report(elapsed time.Duration, final bool) ProgressReport {
	r := ProgressReport{Status: "progress", Operation: p.op, Objects: p.objects.Load(), TotalObjects: p.totalObjects.Load(),
		Bytes: p.bytes.Load(), TotalBytes: p.totalBytes.Load(),
		Elapsed: elapsed.Round(time.Millisecond).String(), ElapsedSeconds: elapsed.Seconds()}
	if final {
		r.Status = "done"
	}
	if s := elapsed.Seconds(); s > 0 {
		r.BytesPerSecond = math.Round(float64(r.Bytes) / s)
	}
	if eta, ok := r.eta(elapsed); ok && !final {
		r.ETA, r.ETASeconds = eta.Round(time.Second).String(), eta.Seconds()
	}
	return r
}

// eta extrapolates the time left from the share done so far: by bytes when
// their total is known, else by objects.
func (r ProgressReport) eta(elapsed time.Duration) (time.Duration, bool) {
	var share float64
	switch {
	case r.TotalBytes > 0 && r.Bytes > 0:
		share = float64(r.Bytes) / float64(r.TotalBytes)
	case r.TotalObjects > 0 && r.Objects > 0:
		share = float64(r.Objects) / float64(r.TotalObjects)
	default:
		return 0, false
	}
	if share >= 1 {
		return 0, true
	}
	return time.Duration(float64(elapsed) * (1 - share) / share), true
}

func (p *Progress) write(elapsed time.Duration, final bool) {
	r := p.report(elapsed, final)
	switch p.mode {
	case progressJSON:
		b, _ := json.Marshal(r)
		fmt.Fprintf(p.w, "%s\n", b)
	case progressLines:
		fmt.Fprintln(p.w, r.Line())
	case progressBar:
		line := r.Bar()
		if len(line) > progressTerminalWide {
			line = line[:progressTerminalWide]
		}
		end := ""
		if final {
			end = "\n"
		}
		fmt.Fprintf(p.w, "\r%-*s%s", progressTerminalWide, line, end)
	}
}

// Line is the report as one plain line.
func (r ProgressReport) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", r.Operation)
	if r.Status == "done" {
		b.WriteString("done, ")
	}
	b.WriteString(r.counts())
	fmt.Fprintf(&b, ", %s/s, %s elapsed", FmtBytes(int64(r.BytesPerSecond)), r.Elapsed)
	if r.ETA != "" {
		fmt.Fprintf(&b, ", ETA %s", r.ETA)
	}
	return b.String()
}

// Clear takes the bar off the terminal line before a result is printed
// there; the next redraw puts it back. It does nothing in other modes.
func (p *Progress) Clear() {
	if p == nil || p.mode != progressBar {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.printed {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", progressTerminalWide))
	}
}

// Bar is the report as a terminal progress bar.
func (r ProgressReport) Bar() string {
	share := -1.0
	switch {
	case r.TotalBytes > 0:
		share = float64(r.Bytes) / float64(r.TotalBytes)
	case r.TotalObjects > 0:
		share = float64(r.Objects) / float64(r.TotalObjects)
	}
	bar := strings.Repeat("·", progressBarCells)
	if share >= 0 {
		n := int(min(share, 1) * progressBarCells)
		bar = strings.Repeat("█", n) + strings.Repeat("░", progressBarCells-n)
	}
	s := fmt.Sprintf("%s [%s] %s %s/s", r.Operation, bar, r.counts(), FmtBytes(int64(r.BytesPerSecond)))
	if r.ETA != "" {
		s += " ETA " + r.ETA
	}
	return s
}

// counts renders "3/10 objects, 1.2 MiB/4.0 MiB", leaving out unknowns.
func (r ProgressReport) counts() string {
	objs := fmt.Sprintf("%d objects", r.Objects)
	if r.TotalObjects > 0 {
		objs = fmt.Sprintf("%d/%d objects", r.Objects, r.TotalObjects)
	}
	size := FmtBytes(r.Bytes)
	if r.TotalBytes > 0 {
		size += "/" + FmtBytes(r.TotalBytes)
	}
	return objs + ", " + size
}

// Set replaces the counts with a server job's own (objects and bytes done).
func (p *Progress) Set(objects, bytes int64) {
	if p == nil {
		return
	}
	p.objects.Store(objects)
	p.bytes.Store(bytes)
}

// JobPollInterval is how often --wait asks a server job how far it is.
const JobPollInterval = 500 * time.Millisecond

// WaitJob follows a server job (a resync, a backfill, a rebuild) until it
// ends, reporting its counts as progress: poll returns the objects and
// bytes done so far and whether the job has ended.
func WaitJob(cmd *cobra.Command, opts *Options, op string, poll func() (objects, bytes int64, ended bool, err error)) error {
	p := StartProgress(cmd, opts, op)
	defer p.Finish()
	t := time.NewTicker(JobPollInterval)
	defer t.Stop()
	for {
		objects, bytes, ended, err := poll()
		if err != nil {
			return err
		}
		p.Set(objects, bytes)
		if ended {
			return nil
		}
		select {
		case <-cmd.Context().Done():
			return fmt.Errorf("stopped waiting (the job goes on on the server): %w", cmd.Context().Err())
		case <-t.C:
		}
	}
}
