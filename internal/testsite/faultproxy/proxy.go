// Package faultproxy owns the fault-injecting TCP proxy that multi-site tests
// put between twinlake sites on 127.0.0.1: a link through it can be cut,
// restored, delayed and throttled while traffic is flowing.
package faultproxy

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// chunkSize is the largest piece read from one side before it is forwarded.
const chunkSize = 32 << 10

// Stats counts what a Proxy has done since New.
type Stats struct {
	Accepted        int64 // connections accepted and forwarded
	Refused         int64 // connections reset on arrival because the proxy was cut
	BytesToTarget   int64 // bytes written to the target
	BytesFromTarget int64 // bytes written back to clients
}

// Proxy forwards TCP connections from its own loopback address to a target.
// All methods are safe for concurrent use; faults take effect immediately,
// on open connections as well as new ones.
type Proxy struct {
	ln     net.Listener
	target string
	ctx    context.Context // cancelled by Close, aborts dials in progress
	cancel context.CancelFunc
	wg     sync.WaitGroup // the accept loop and one handler per connection

	toTarget, fromTarget atomic.Int64

	mu        sync.Mutex
	links     map[*link]struct{}
	cut       bool
	closed    bool
	latency   time.Duration
	bandwidth int64
	accepted  int64
	refused   int64
}

// link is one client connection and the upstream connection that serves it.
type link struct {
	client   net.Conn
	upstream net.Conn      // nil until dialled; guarded by Proxy.mu
	done     chan struct{} // closed when the link is dropped
	dropped  bool          // guarded by Proxy.mu
}

// New listens on 127.0.0.1:0 and forwards every accepted connection to target
// (host:port). The caller must Close the proxy.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{ln: ln, target: target, ctx: ctx, cancel: cancel, links: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr is the host:port to dial instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL is "http://" + Addr().
func (p *Proxy) URL() string { return "http://" + p.Addr() }

// Cut partitions the link: every open connection is reset on both sides and
// new connections are accepted and reset at once, until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for l := range p.links {
		p.dropLocked(l, true)
	}
}

// Restore ends a Cut; new connections are forwarded again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// SetLatency holds every chunk for d before forwarding it, in both directions
// (d <= 0 means none). Chunks in one direction are forwarded in order, so a
// latency also caps each direction's throughput at 32 KiB per d.
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = max(d, 0)
}

// SetBandwidth limits each direction of each connection to bytesPerSec
// (<= 0 means unlimited).
func (p *Proxy) SetBandwidth(bytesPerSec int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bandwidth = max(bytesPerSec, 0)
}

// Stats returns a snapshot of the counters.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Accepted: p.accepted, Refused: p.refused,
		BytesToTarget: p.toTarget.Load(), BytesFromTarget: p.fromTarget.Load()}
}

// Close stops listening, resets every open connection and returns once all of
// the proxy's goroutines have exited. Calling it again returns nil.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for l := range p.links {
		p.dropLocked(l, true)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.cancel()
	p.wg.Wait()
	return err
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // the listener was closed; nothing else fails on loopback
		}
		p.mu.Lock()
		switch {
		case p.closed:
			c.Close()
		case p.cut:
			p.refused++
			reset(c)
		default:
			p.accepted++
			l := &link{client: c, done: make(chan struct{})}
			p.links[l] = struct{}{}
			p.wg.Add(1) // under mu, so never after Close's Wait has begun
			go p.handle(l)
		}
		p.mu.Unlock()
	}
}

// handle dials the target for l and copies both ways until both sides finish.
func (p *Proxy) handle(l *link) {
	defer p.wg.Done()
	var d net.Dialer
	up, err := d.DialContext(p.ctx, "tcp", p.target)
	if err != nil || !p.attach(l, up) {
		p.drop(l, true)
		return
	}
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		p.pipe(l, up, l.client, &p.toTarget)
	}()
	p.pipe(l, l.client, up, &p.fromTarget)
	<-sent
	p.drop(l, false)
}

// attach makes up l's upstream, or closes it if l was dropped while dialling.
func (p *Proxy) attach(l *link, up net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l.dropped {
		up.Close()
		return false
	}
	l.upstream = up
	return true
}

// pipe forwards src to dst, shaped by the faults in force as each chunk
// arrives. At EOF it half-closes dst; on any other failure it drops the link.
func (p *Proxy) pipe(l *link, dst, src net.Conn, count *atomic.Int64) {
	buf := make([]byte, chunkSize)
	for {
		_, bw := p.faults()
		n, err := src.Read(buf[:chunkFor(bw)])
		if n > 0 {
			lat, bw := p.faults()
			if bw > 0 {
				lat += time.Duration(int64(n) * int64(time.Second) / bw)
			}
			if !wait(l.done, lat) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				err = werr
			} else {
				count.Add(int64(n))
			}
		}
		if errors.Is(err, io.EOF) {
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				cw.CloseWrite()
			}
			return
		}
		if err != nil {
			p.drop(l, false)
			return
		}
	}
}

func (p *Proxy) faults() (latency time.Duration, bandwidth int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latency, p.bandwidth
}

// chunkFor keeps a throttled chunk to about 50ms of transfer, so a slow link
// trickles rather than bursts.
func chunkFor(bandwidth int64) int {
	if bandwidth == 0 {
		return chunkSize
	}
	return int(min(max(bandwidth/20, 1), chunkSize))
}

// wait sleeps for d unless done closes first, and reports whether it slept.
func wait(done <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

func (p *Proxy) drop(l *link, rst bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropLocked(l, rst)
}

// dropLocked closes both sides of l, with a reset if rst. The caller holds p.mu.
func (p *Proxy) dropLocked(l *link, rst bool) {
	if l.dropped {
		return
	}
	l.dropped = true
	close(l.done)
	delete(p.links, l)
	for _, c := range []net.Conn{l.client, l.upstream} {
		switch {
		case c == nil:
		case rst:
			reset(c)
		default:
			c.Close()
		}
	}
}

// reset closes c so that the peer sees a connection reset, not a clean EOF.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}
