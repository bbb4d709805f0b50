package blob

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/twinlake/twinlake/internal/trace"
)

// TracedDrive publishes every call on a drive as a trace.Storage event:
// shard writes and reads when they end (with their bytes), removals,
// listings and the drive's mark. While no one traces storage calls the
// cost is one atomic load per call.
func TracedDrive(d Drive, bus *trace.Bus) Drive {
	if bus == nil {
		return d
	}
	return &tracedDrive{d: d, bus: bus}
}

type tracedDrive struct {
	d   Drive
	bus *trace.Bus
}

func (t *tracedDrive) publish(fn, id string, start time.Time, in, out int64, err error) {
	ev := trace.Event{Type: trace.Storage, Time: start, FuncName: "storage." + fn, Path: t.d.String(),
		Duration: time.Since(start), BytesIn: in, BytesOut: out}
	if id != "" {
		ev.Path += "/" + id
	}
	if err != nil {
		ev.Error = err.Error()
	}
	t.bus.Publish(ev)
}

// call runs one call that has no stream, tracing it if anyone listens.
func (t *tracedDrive) call(fn, id string, f func() error) error {
	if !t.bus.Enabled(trace.Storage) {
		return f()
	}
	start := time.Now()
	err := f()
	t.publish(fn, id, start, 0, 0, err)
	return err
}

func (t *tracedDrive) write(fn, id string, open func(string) (ShardWriter, error)) (ShardWriter, error) {
	if !t.bus.Enabled(trace.Storage) {
		return open(id)
	}
	start := time.Now()
	w, err := open(id)
	if err != nil {
		t.publish(fn, id, start, 0, 0, err)
		return nil, err
	}
	return &tracedWriter{ShardWriter: w, t: t, fn: fn, id: id, start: start}, nil
}

func (t *tracedDrive) Create(id string) (ShardWriter, error) {
	return t.write("WriteShard", id, t.d.Create)
}

func (t *tracedDrive) Rewrite(id string) (ShardWriter, error) {
	return t.write("RewriteShard", id, t.d.Rewrite)
}

func (t *tracedDrive) Open(id string) (ShardReader, error) {
	if !t.bus.Enabled(trace.Storage) {
		return t.d.Open(id)
	}
	start := time.Now()
	r, err := t.d.Open(id)
	if err != nil {
		t.publish("ReadShard", id, start, 0, 0, err)
		return nil, err
	}
	return &tracedReader{ShardReader: r, t: t, id: id, start: start}, nil
}

func (t *tracedDrive) Remove(id string) error {
	return t.call("RemoveShard", id, func() error { return t.d.Remove(id) })
}

func (t *tracedDrive) List(fan string) (ids []string, err error) {
	err = t.call("ListShards", fan, func() error {
		ids, err = t.d.List(fan)
		return err
	})
	return ids, err
}

func (t *tracedDrive) ReadMark() (m []byte, err error) {
	err = t.call("ReadMark", "", func() error {
		m, err = t.d.ReadMark()
		return err
	})
	return m, err
}

func (t *tracedDrive) WriteMark(mark []byte) error {
	return t.call("WriteMark", "", func() error { return t.d.WriteMark(mark) })
}

func (t *tracedDrive) String() string { return t.d.String() }

// errAborted is a traced write's error when it was given up.
var errAborted = errors.New("shard write aborted")

type tracedWriter struct {
	ShardWriter
	t     *tracedDrive
	fn    string
	id    string
	start time.Time
	n     int64
}

func (w *tracedWriter) Write(p []byte) (int, error) {
	n, err := w.ShardWriter.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *tracedWriter) Commit() error {
	err := w.ShardWriter.Commit()
	w.t.publish(w.fn, w.id, w.start, w.n, 0, err)
	return err
}

func (w *tracedWriter) Abort() {
	w.ShardWriter.Abort()
	w.t.publish(w.fn, w.id, w.start, w.n, 0, errAborted)
}

type tracedReader struct {
	ShardReader
	t     *tracedDrive
	id    string
	start time.Time
	n     atomic.Int64
}

func (r *tracedReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.ShardReader.ReadAt(p, off)
	r.n.Add(int64(n))
	return n, err
}

func (r *tracedReader) Close() error {
	err := r.ShardReader.Close()
	r.t.publish("ReadShard", r.id, r.start, 0, r.n.Load(), err)
	return err
}
