package cluster

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"
)

// recordHandler keeps every record it is given.
type recordHandler struct {
	mu      sync.Mutex
	attrs   []slog.Attr
	records *[]slog.Record
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	r = r.Clone()
	r.AddAttrs(h.attrs...)
	*h.records = append(*h.records, r)
	return nil
}
func (h *recordHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &recordHandler{attrs: append(append([]slog.Attr{}, h.attrs...), as...), records: h.records}
}
func (h *recordHandler) WithGroup(string) slog.Handler { return h }

func TestZapLoggerPassesOnlyErrors(t *testing.T) {
	var records []slog.Record
	lg := newZapLogger(slog.New(&recordHandler{records: &records}), nil)
	lg.Debug("debug")
	lg.Info("elected", zap.String("member", "n1"))
	lg.Warn("slow fsync")
	lg.With(zap.String("member", "n1")).Error("lost quorum", zap.Error(errors.New("boom")), zap.Int("peers", 2))
	if len(records) != 1 {
		t.Fatalf("got %d records, want the error only: %v", len(records), records)
	}
	r := records[0]
	if r.Level != slog.LevelError || r.Message != "lost quorum" {
		t.Fatalf("record %v %q, want ERROR \"lost quorum\"", r.Level, r.Message)
	}
	got := map[string]string{}
	r.Attrs(func(a slog.Attr) bool {
		got[a.Key] = a.Value.String()
		return true
	})
	for k, v := range map[string]string{"member": "n1", "error": "boom", "peers": "2"} {
		if got[k] != v {
			t.Errorf("attribute %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

func TestZapLoggerQuietWhileClosing(t *testing.T) {
	var records []slog.Record
	closing := new(atomic.Bool)
	lg := newZapLogger(slog.New(&recordHandler{records: &records}), closing)
	closing.Store(true)
	lg.Error("setting up serving from embedded etcd failed.")
	if len(records) != 1 || records[0].Level != slog.LevelDebug {
		t.Fatalf("records %v, want one at debug level", records)
	}
}
