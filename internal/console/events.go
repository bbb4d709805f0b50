package console

import (
	"sync"
	"time"

	"github.com/twinlake/twinlake/internal/trace"
)

// EventSource is the site's trace bus (trace.Bus).
type EventSource interface {
	Subscribe(f trace.Filter, buf int) (<-chan trace.Event, func())
}

// Bounds of the scanner event tail.
const (
	eventTailSize = 50
	// eventTailIdle unsubscribes once no page has asked for this long, so
	// the scanner stops publishing its events when nobody looks.
	eventTailIdle = time.Minute
)

// eventTail keeps the catalog scanner's recent trace events while the
// Tables DR page is open: it subscribes on the first read and unsubscribes
// after eventTailIdle without one. Events from before the first read are
// not known (the bus keeps none).
type eventTail struct {
	src EventSource
	now func() time.Time

	mu       sync.Mutex
	events   []trace.Event
	since    time.Time
	lastRead time.Time
	stop     func()
	closed   bool
}

func newEventTail(src EventSource, now func() time.Time) *eventTail {
	return &eventTail{src: src, now: now}
}

// read returns the recent events, newest first, and since when they are
// followed (zero when there is no source).
func (t *eventTail) read() ([]trace.Event, time.Time) {
	if t.src == nil {
		return nil, time.Time{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastRead = t.now()
	if t.stop == nil && !t.closed {
		ch, stop := t.src.Subscribe(trace.Filter{Types: trace.TablesScan}, 256)
		t.stop, t.since = stop, t.now()
		go t.follow(ch)
	}
	out := make([]trace.Event, len(t.events))
	for i, e := range t.events {
		out[len(t.events)-1-i] = e
	}
	return out, t.since
}

func (t *eventTail) follow(ch <-chan trace.Event) {
	tick := time.NewTicker(eventTailIdle / 4)
	defer tick.Stop()
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				return
			}
			t.mu.Lock()
			t.events = append(t.events, e)
			if len(t.events) > eventTailSize {
				t.events = append(t.events[:0:0], t.events[len(t.events)-eventTailSize:]...)
			}
			t.mu.Unlock()
		case <-tick.C:
			t.mu.Lock()
			idle := t.closed || t.now().Sub(t.lastRead) > eventTailIdle
			if idle && t.stop != nil {
				t.stop()
				t.stop = nil
				t.events = nil
			}
			t.mu.Unlock()
			if idle {
				return
			}
		}
	}
}

func (t *eventTail) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.stop != nil {
		t.stop()
		t.stop = nil
	}
}
