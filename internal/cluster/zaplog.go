package cluster

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newZapLogger returns a zap logger, for etcd's server and client, that
// passes only errors (and worse) on to log, at slog's error level: etcd logs
// every election, snapshot and connection at info, far too much beside
// twinlake's own log. Once closing (when not nil) is set, errors go to log
// at debug level: etcd reports its listeners and streams ending as errors
// while it shuts down.
func newZapLogger(log *slog.Logger, closing *atomic.Bool) *zap.Logger {
	return zap.New(&slogCore{log: log, closing: closing})
}

// slogCore is a zapcore.Core writing to a slog.Logger.
type slogCore struct {
	log     *slog.Logger
	closing *atomic.Bool
	attrs   []slog.Attr // from With
}

var _ zapcore.Core = (*slogCore)(nil)

func (c *slogCore) Enabled(l zapcore.Level) bool { return l >= zapcore.ErrorLevel }

func (c *slogCore) With(fields []zapcore.Field) zapcore.Core {
	return &slogCore{log: c.log, closing: c.closing, attrs: append(slices.Clip(c.attrs), fieldAttrs(fields)...)}
}

func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	attrs := append(slices.Clip(c.attrs), fieldAttrs(fields)...)
	if e.LoggerName != "" {
		attrs = append(attrs, slog.String("logger", e.LoggerName))
	}
	level := slog.LevelError
	if c.closing != nil && c.closing.Load() {
		level = slog.LevelDebug
	}
	c.log.LogAttrs(context.Background(), level, e.Message, attrs...)
	return nil
}

func (c *slogCore) Sync() error { return nil }

// fieldAttrs converts zap fields through zap's own map encoder, so every
// field type (errors, durations, arrays, objects) comes out as zap renders it.
func fieldAttrs(fields []zapcore.Field) []slog.Attr {
	if len(fields) == 0 {
		return nil
	}
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	attrs := make([]slog.Attr, 0, len(enc.Fields))
	for k, v := range enc.Fields {
		attrs = append(attrs, slog.Any(k, v))
	}
	slices.SortFunc(attrs, func(a, b slog.Attr) int { return strings.Compare(a.Key, b.Key) })
	return attrs
}
