package app

import (
	"net"
	"syscall"
	"testing"
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
