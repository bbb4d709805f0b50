// Package bench is the load-generator core behind `twinlake bench ...`: a
// worker pool that runs one operation at a fixed concurrency until a count
// or a duration is reached, timing every call into a latency histogram, and
// the size parsing and report rows the bench commands share. It knows
// nothing about S3 or any other protocol: callers pass the operation.
package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Op is one timed operation. seq numbers the operations of one run from 0,
// unique across workers, so an op can address "object seq". Op is called
// from Concurrency goroutines at once.
type Op func(ctx context.Context, seq int64) error

// Config bounds one run. Exactly one of Count and Duration is set.
type Config struct {
	// Concurrency is the number of workers, each running one op at a time.
	Concurrency int
	// Count is the total number of operations, shared by all workers.
	Count int64
	// Duration stops workers from starting new operations once it has
	// passed; operations already running finish and are counted.
	Duration time.Duration
	// StopOnError stops every worker after the first failed operation.
	StopOnError bool
	// Rate, when positive, paces the run: operation seq is due Rate
	// operations per second after the start, and a worker that claims it
	// early waits until then. Its latency runs from when it was due, so
	// an operation held back by earlier slow ones counts the time it
	// waited for a worker, and the time a worker waited for the due time
	// is not counted.
	Rate float64
}

// Validate reports every problem with the config at once.
func (c Config) Validate() error {
	var errs []error
	if c.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("concurrency %d: want at least 1", c.Concurrency))
	}
	if c.Count < 0 {
		errs = append(errs, fmt.Errorf("count %d: want at least 1", c.Count))
	}
	if c.Duration < 0 {
		errs = append(errs, fmt.Errorf("duration %s: want a positive duration", c.Duration))
	}
	if c.Rate < 0 {
		errs = append(errs, fmt.Errorf("rate %g: want a positive rate, or 0 for no pacing", c.Rate))
	}
	switch {
	case c.Count > 0 && c.Duration > 0:
		errs = append(errs, errors.New("set a count or a duration, not both"))
	case c.Count == 0 && c.Duration == 0:
		errs = append(errs, errors.New("set a count or a duration"))
	}
	return errors.Join(errs...)
}

// Result is what one run measured.
type Result struct {
	// Ops counts successful operations; only they are in Latency.
	Ops int64
	// Errors counts failed operations; FirstErr is the first of them.
	Errors   int64
	FirstErr error
	// Elapsed runs from the start until the last worker stopped.
	Elapsed time.Duration
	Latency *Histogram
}

// OpsPerSec is successful operations per second of Elapsed.
func (r Result) OpsPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Elapsed.Seconds()
}

// Run runs op under cfg and returns what it measured. It returns an error
// only for an invalid config or when ctx ends the run early; failed
// operations are counted in the result instead.
func Run(ctx context.Context, cfg Config, op Op) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	parent := ctx
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	p := &pool{cfg: cfg, op: op, stop: stop, start: time.Now()}
	hists := make([]Histogram, cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range hists {
		wg.Go(func() { p.work(ctx, &hists[i]) })
	}
	wg.Wait()
	res := Result{Ops: p.ok.Load(), Errors: p.failed.Load(), Elapsed: time.Since(p.start), Latency: &Histogram{}}
	for i := range hists {
		res.Latency.Merge(&hists[i])
	}
	if e := p.firstErr.Load(); e != nil {
		res.FirstErr = *e
	}
	if err := parent.Err(); err != nil {
		return res, err
	}
	return res, nil
}

// pool is the shared state of one run's workers.
type pool struct {
	cfg   Config
	op    Op
	stop  context.CancelFunc
	start time.Time

	next       atomic.Int64 // next seq to claim
	ok, failed atomic.Int64
	firstErr   atomic.Pointer[error]
}

// claim returns the next seq, or false when the run is over.
func (p *pool) claim(ctx context.Context) (int64, bool) {
	if ctx.Err() != nil {
		return 0, false
	}
	if p.cfg.Duration > 0 && time.Since(p.start) >= p.cfg.Duration {
		return 0, false
	}
	seq := p.next.Add(1) - 1
	if p.cfg.Count > 0 && seq >= p.cfg.Count {
		return 0, false
	}
	return seq, true
}

func (p *pool) work(ctx context.Context, h *Histogram) {
	for {
		seq, ok := p.claim(ctx)
		if !ok {
			return
		}
		t0, ok := p.due(ctx, seq)
		if !ok {
			return
		}
		err := p.op(ctx, seq)
		d := time.Since(t0)
		if err == nil {
			h.Record(d)
			p.ok.Add(1)
			continue
		}
		if ctx.Err() != nil {
			return // interrupted or stopped: not this operation's failure
		}
		p.failed.Add(1)
		p.firstErr.CompareAndSwap(nil, &err)
		if p.cfg.StopOnError {
			p.stop()
		}
	}
}

// due waits until seq is due under Rate and returns when it was due (now,
// without a rate), or false if ctx ended first.
func (p *pool) due(ctx context.Context, seq int64) (time.Time, bool) {
	if p.cfg.Rate <= 0 {
		return time.Now(), true
	}
	at := p.start.Add(time.Duration(float64(seq) / p.cfg.Rate * float64(time.Second)))
	d := time.Until(at)
	if d <= 0 {
		return at, true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return at, false
	case <-t.C:
		return at, true
	}
}
