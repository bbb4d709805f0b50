package trace

import (
	"encoding/json"
	"net/http"
	"time"
)

// ContentTypeNDJSON is the media type of a served stream.
const ContentTypeNDJSON = "application/x-ndjson"

// Serve answers a request with a stream of events: one JSON object a
// line, flushed as each comes, until the request's context ends or the
// client goes away; an idle stream gets a blank line every keepAlive, so
// that proxies keep it open and a vanished client is noticed. Events come
// from the channels in sources (a nil one never delivers; a closed one is
// done with); edit, when set, changes each event before it is written.
func Serve(w http.ResponseWriter, r *http.Request, keepAlive time.Duration, edit func(*Event), sources ...<-chan Event) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // the stream outlives any server write timeout
	w.Header().Set("Content-Type", ContentTypeNDJSON)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return // the client is gone, or the writer cannot stream
	}
	events := merge(r, sources)
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	enc := json.NewEncoder(w)
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case ev := <-events:
			if edit != nil {
				edit(&ev)
			}
			err = enc.Encode(ev)
		case <-tick.C:
			_, err = w.Write([]byte("\n"))
		}
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			return // a write fails only when the client has gone
		}
	}
}

// merge forwards every source into one channel until the request ends.
func merge(r *http.Request, sources []<-chan Event) <-chan Event {
	if len(sources) == 1 {
		return sources[0]
	}
	out := make(chan Event)
	for _, src := range sources {
		if src == nil {
			continue
		}
		go func() {
			for ev := range src {
				select {
				case out <- ev:
				case <-r.Context().Done():
					return
				}
			}
		}()
	}
	return out
}
