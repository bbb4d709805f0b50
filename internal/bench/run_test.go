package bench

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBenchConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr []string // substrings; every one must be reported
	}{
		{"count", Config{Concurrency: 4, Count: 10}, nil},
		{"duration", Config{Concurrency: 1, Duration: time.Second}, nil},
		{"neither", Config{Concurrency: 1}, []string{"set a count or a duration"}},
		{"both", Config{Concurrency: 1, Count: 1, Duration: time.Second}, []string{"not both"}},
		{"everything wrong", Config{Concurrency: 0, Count: -1, Duration: -time.Second},
			[]string{"concurrency 0", "count -1", "duration -1s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, missing %q", err, w)
				}
			}
		})
	}
}

func TestBenchRunCount(t *testing.T) {
	for _, conc := range []int{1, 3, 16} {
		var mu sync.Mutex
		seen := map[int64]int{}
		res, err := Run(context.Background(), Config{Concurrency: conc, Count: 100}, func(_ context.Context, seq int64) error {
			mu.Lock()
			seen[seq]++
			mu.Unlock()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Ops != 100 || res.Errors != 0 || res.Latency.Count() != 100 {
			t.Errorf("conc %d: ops=%d errors=%d recorded=%d, want 100/0/100", conc, res.Ops, res.Errors, res.Latency.Count())
		}
		for i := int64(0); i < 100; i++ {
			if seen[i] != 1 {
				t.Errorf("conc %d: seq %d ran %d times, want once", conc, i, seen[i])
			}
		}
	}
}

func TestBenchRunDuration(t *testing.T) {
	res, err := Run(context.Background(), Config{Concurrency: 4, Duration: 50 * time.Millisecond}, func(context.Context, int64) error {
		time.Sleep(time.Millisecond)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ops == 0 || res.Elapsed < 50*time.Millisecond || res.Elapsed > 2*time.Second {
		t.Errorf("ops=%d elapsed=%v: want some ops in about 50ms", res.Ops, res.Elapsed)
	}
	if p := res.Latency.Percentile(50); p < time.Millisecond {
		t.Errorf("p50 = %v, want at least the 1ms each op sleeps", p)
	}
}

// A paced run starts no operation before it is due, and times each from
// when it was due: the wait of a worker that claimed it early is not its
// latency.
func TestBenchRunPaced(t *testing.T) {
	const rate, count = 10.0, 8
	var mu sync.Mutex
	started := map[int64]time.Time{}
	before := time.Now()
	res, err := Run(context.Background(), Config{Concurrency: 4, Count: count, Rate: rate}, func(_ context.Context, seq int64) error {
		mu.Lock()
		started[seq] = time.Now()
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ops != count {
		t.Fatalf("ops=%d, want %d", res.Ops, count)
	}
	for seq, at := range started {
		if due := before.Add(time.Duration(float64(seq) / rate * float64(time.Second))); at.Before(due) {
			t.Errorf("seq %d started %v before it was due", seq, due.Sub(at))
		}
	}
	// Unpaced, seqs 1-3 would have counted waits of 100-300ms.
	if p := res.Latency.Percentile(50); p >= 100*time.Millisecond {
		t.Errorf("p50 = %v: the wait for the due time was timed", p)
	}
	if err := (Config{Concurrency: 1, Count: 1, Rate: -1}).Validate(); err == nil {
		t.Error("a negative rate validated")
	}
}

func TestBenchRunErrors(t *testing.T) {
	boom := errors.New("boom")
	failOdd := func(_ context.Context, seq int64) error {
		if seq%2 == 1 {
			return boom
		}
		return nil
	}
	res, err := Run(context.Background(), Config{Concurrency: 2, Count: 10}, failOdd)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ops != 5 || res.Errors != 5 || !errors.Is(res.FirstErr, boom) || res.Latency.Count() != 5 {
		t.Errorf("ops=%d errors=%d first=%v recorded=%d, want 5/5/boom/5", res.Ops, res.Errors, res.FirstErr, res.Latency.Count())
	}

	res, err = Run(context.Background(), Config{Concurrency: 1, Count: 1000, StopOnError: true}, failOdd)
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 1 || res.Ops != 1 {
		t.Errorf("StopOnError: ops=%d errors=%d, want 1/1", res.Ops, res.Errors)
	}
}

func TestBenchRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	res, err := Run(ctx, Config{Concurrency: 2, Duration: time.Minute}, func(ctx context.Context, seq int64) error {
		if seq == 10 {
			cancel()
		}
		<-time.After(time.Millisecond)
		return ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run() error = %v, want context.Canceled", err)
	}
	if res.Errors != 0 {
		t.Errorf("errors = %d: operations cut short by cancellation are not failures", res.Errors)
	}
}

func TestBenchRunInvalidConfig(t *testing.T) {
	if _, err := Run(context.Background(), Config{}, func(context.Context, int64) error { return nil }); err == nil {
		t.Fatal("Run with an empty config succeeded")
	}
}

func TestBenchNewRowAndTable(t *testing.T) {
	h := &Histogram{}
	for i := 1; i <= 100; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	res := Result{Ops: 100, Elapsed: 2 * time.Second, Latency: h}
	row := NewRow("PUT", 1<<20, 8, res)
	want := Row{Op: "PUT", Size: 1 << 20, Concurrency: 8, Ops: 100, Seconds: 2, OpsPerSec: 50,
		MBPerSec: 50 * 1048576 / 1e6, P50Ms: 50, P90Ms: 90, P99Ms: 99, MaxMs: 100}
	// Latencies above 256ns may sit up to 1/128 above the exact value.
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", row.P50Ms, want.P50Ms}, {"p90", row.P90Ms, want.P90Ms}, {"p99", row.P99Ms, want.P99Ms}} {
		if c.got < c.want || c.got > c.want*(1+1.0/128) {
			t.Errorf("%s = %v ms, want %v ms (+1/128)", c.name, c.got, c.want)
		}
	}
	row.P50Ms, row.P90Ms, row.P99Ms = want.P50Ms, want.P90Ms, want.P99Ms
	if !reflect.DeepEqual(row, want) {
		t.Errorf("NewRow = %+v\nwant     %+v", row, want)
	}

	var buf bytes.Buffer
	if err := WriteTable(&buf, []Row{row}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "OPS/S") || !strings.Contains(lines[1], "PUT") || !strings.Contains(lines[1], "1MiB") {
		t.Errorf("table:\n%s", buf.String())
	}
}
