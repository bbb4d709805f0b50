package servercmd

import (
	"fmt"
	"io"
	"log/slog"
	"os"
)

// newLogger builds the server's logger: format is "text" (logfmt-style
// key=value, for people) or "json" (one object a line, for log shippers).
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// openAccessLog opens the access log destination: "" for none, "stdout",
// or a file appended to (created mode 0640: it names objects, never
// secrets). The returned close is never nil.
func openAccessLog(dest string, stdout io.Writer) (io.Writer, func() error, error) {
	switch dest {
	case "":
		return nil, func() error { return nil }, nil
	case "stdout", "-":
		return stdout, func() error { return nil }, nil
	}
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, nil, fmt.Errorf("--access-log: %w", err)
	}
	return f, f.Close, nil
}
