package cmdutil

import (
	"strings"
	"testing"
	"time"
)

func TestProgressReportRendering(t *testing.T) {
	tests := []struct {
		name             string
		r                ProgressReport
		elapsed          time.Duration
		wantETA          time.Duration
		etaKnown         bool
		wantBar, wantLin []string
	}{
		{name: "bytes known", r: ProgressReport{Operation: "cp", Objects: 1, TotalObjects: 4, Bytes: 25 << 20, TotalBytes: 100 << 20, BytesPerSecond: 5 << 20},
			elapsed: 5 * time.Second, wantETA: 15 * time.Second, etaKnown: true,
			wantBar: []string{"cp [██████░░░░░░░░░░░░░░░░░░]", "1/4 objects, 25.0MiB/100.0MiB", "5.0MiB/s"},
			wantLin: []string{"cp: 1/4 objects, 25.0MiB/100.0MiB, 5.0MiB/s"}},
		{name: "objects only", r: ProgressReport{Operation: "rm", Objects: 30, TotalObjects: 40},
			elapsed: 3 * time.Second, wantETA: time.Second, etaKnown: true,
			wantBar: []string{"rm [██████████████████░░░░░░]", "30/40 objects"}},
		{name: "nothing known", r: ProgressReport{Operation: "pipe", Bytes: 10},
			elapsed: time.Second, etaKnown: false,
			wantBar: []string{"pipe [························]", "0 objects, 10B"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eta, ok := tt.r.eta(tt.elapsed)
			if ok != tt.etaKnown || eta != tt.wantETA {
				t.Errorf("eta = %v, %v; want %v, %v", eta, ok, tt.wantETA, tt.etaKnown)
			}
			for _, w := range tt.wantBar {
				if !strings.Contains(tt.r.Bar(), w) {
					t.Errorf("bar %q lacks %q", tt.r.Bar(), w)
				}
			}
			for _, w := range tt.wantLin {
				if !strings.Contains(tt.r.Line(), w) {
					t.Errorf("line %q lacks %q", tt.r.Line(), w)
				}
			}
		})
	}
}

// A nil Progress (nothing to report) accepts every call.
func TestNilProgress(t *testing.T) {
	var p *Progress
	p.SetTotal(1, 2)
	p.AddTotal(1, 2)
	p.AddBytes(3)
	p.ObjectDone()
	p.Clear()
	if p.Hook() != nil {
		t.Error("nil progress has a hook")
	}
	p.Finish()
}
