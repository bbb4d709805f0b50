package app

import (
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/netcut"
)

// TestNodeDialerKeepAlive: a connection between nodes has TCP keep-alive
// probes that find a dead machine within seconds.
func TestNodeDialerKeepAlive(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conn, err := nodeDialer().Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][3]int{ // level, option, value
		"SO_KEEPALIVE":  {syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1},
		"TCP_KEEPIDLE":  {syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, 5},
		"TCP_KEEPINTVL": {syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, 2},
		"TCP_KEEPCNT":   {syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT, 3},
	}
	err = raw.Control(func(fd uintptr) {
		for name, w := range want {
			got, err := syscall.GetsockoptInt(int(fd), w[0], w[1])
			if err != nil || got != w[2] {
				t.Errorf("%s = %d, %v; want %d", name, got, err, w[2])
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestProbeUnreachable probes an address whose connections time out, as
// a machine's that is down or cut off (netcut.Hold).
func TestProbeUnreachable(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	release, err := netcut.Hold(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	client := &http.Client{Transport: probeTransport(nodeTransport(nil))}
	start := time.Now()
	if got := probe(client, "http://"+addr+"/twinlake/health/live"); got != probeUnreachable {
		t.Errorf("probe of an address whose connections time out = %v, want unreachable", got)
	}
	if took := time.Since(start); took >= stallTimeout {
		t.Errorf("the probe took %v: it should give up the connection after %v", took, probeDialTimeout)
	}
}
