package nodeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/twinlake/twinlake/internal/metrics"
)

// pathProcess answers what the node's process has used.
const pathProcess = Prefix + "process"

// Process is what a node tells of its process: the CPU time it has used
// since it started, user and system, in seconds, and the most resident
// memory it has held; and of its passing of requests to the site's
// leader (see Routing).
type Process struct {
	CPUSeconds   float64 `json:"cpuSeconds"`
	PeakRSSBytes int64   `json:"peakRSSBytes,omitempty"`
	Routing
}

// Routing is what a node tells of the requests it passes to the leader.
type Routing struct {
	// HeldRequests are the requests waiting now for a leader to pass
	// them to.
	HeldRequests int64 `json:"heldRequests,omitempty"`
	// LeadersDeposed counts the leaders whose session the node ended
	// since it started, their process found gone or stalled, or their
	// machine unreachable from most of the other nodes.
	LeadersDeposed int64 `json:"leadersDeposed,omitempty"`
	// ReadsHere counts the GETs the node passed to the leader whose data
	// it read from the drives itself since it started, and ReadBytesHere
	// their bytes.
	ReadsHere     int64 `json:"readsHere,omitempty"`
	ReadBytesHere int64 `json:"readBytesHere,omitempty"`
	// WritesHere counts the PUTs the node passed to the leader whose
	// data it wrote to the drives itself since it started, and
	// WriteBytesHere their bytes.
	WritesHere     int64 `json:"writesHere,omitempty"`
	WriteBytesHere int64 `json:"writeBytesHere,omitempty"`
}

// LocalProcess is what this process has used.
func LocalProcess() Process {
	cpu, peak := metrics.ProcessUsage()
	return Process{CPUSeconds: cpu, PeakRSSBytes: peak}
}

// SetRouting makes the node tell routing() with its process; call it
// before serving.
func (s *Server) SetRouting(routing func() Routing) { s.routing = routing }

func (s *Server) process(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	p := LocalProcess()
	if s.routing != nil {
		p.Routing = s.routing()
	}
	return json.NewEncoder(w).Encode(p)
}

// Process asks the node what its process has used.
func (d *Drive) Process(ctx context.Context) (Process, error) {
	resp, err := d.do(ctx, http.MethodGet, pathProcess, nil, nil)
	if err != nil {
		return Process{}, err
	}
	defer resp.Body.Close()
	var p Process
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<10)).Decode(&p); err != nil {
		return Process{}, fmt.Errorf("node %s: process: %w", d.base, err)
	}
	return p, nil
}
