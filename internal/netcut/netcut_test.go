package netcut

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestHold: a held port's connections time out, they are not refused;
// released, the port refuses them again (nothing listens).
func TestHold(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	release, err := Hold(addr)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		start := time.Now()
		c, err := net.DialTimeout("tcp4", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			t.Fatal("a connection to a held port was made")
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("connection to a held port: %v, want a timeout", err)
		}
		if took := time.Since(start); took < 150*time.Millisecond {
			t.Fatalf("connection to a held port failed after %v, before its timeout", took)
		}
	}
	release()
	if _, err := net.DialTimeout("tcp4", addr, time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("connection to a released port: %v, want refused", err)
	}
}

// TestHoldRefusesOtherAddresses: an IPv6 address, or no port, is an
// error.
func TestHoldRefusesOtherAddresses(t *testing.T) {
	for _, addr := range []string{"[::1]:1", "127.0.0.1:0", "no address"} {
		if release, err := Hold(addr); err == nil {
			release()
			t.Errorf("Hold(%q) succeeded", addr)
		}
	}
}

// TestHoldPorts holds a port and the next ones, all or none: when one of
// them is taken, those held already are freed.
func TestHoldPorts(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	host, ps, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(ps)
	if port >= 65535 {
		t.Skipf("port %d has no next", port)
	}
	next := net.JoinHostPort(host, strconv.Itoa(port+1))
	release, err := HoldPorts(addr, 2)
	if err != nil {
		t.Skipf("ports %s and the next not both free: %v", addr, err)
	}
	for _, a := range []string{addr, next} {
		if c, err := net.DialTimeout("tcp4", a, 200*time.Millisecond); err == nil {
			c.Close()
			t.Fatalf("a connection to held port %s was made", a)
		}
	}
	release()

	// The next port taken: nothing stays held.
	taken, err := net.Listen("tcp4", next)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", next, err)
	}
	defer taken.Close()
	if release, err := HoldPorts(addr, 2); err == nil {
		release()
		t.Fatal("HoldPorts succeeded with a port taken")
	}
	if _, err := net.DialTimeout("tcp4", addr, time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("connection to the first port after a failed HoldPorts: %v, want refused (freed)", err)
	}
}
