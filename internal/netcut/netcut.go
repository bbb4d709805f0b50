// Package netcut makes a loopback port behave as a machine that is down
// or cut off: a connection to it times out, where a port nothing listens
// on refuses it at once. Tests and `twinlake bench failover` put it on a
// killed node's ports.
package netcut

import (
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"
)

// Hold listens on addr (an IPv4 address and port) with a queue of one
// connection, fills the queue, and never accepts: the kernel drops the
// first packet of every new connection, which then times out. release
// frees the port.
func Hold(addr string) (release func(), err error) {
	ta, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return nil, err
	}
	ip := ta.IP.To4()
	if ip == nil || ta.Port == 0 {
		return nil, fmt.Errorf("netcut: %s is not an IPv4 address and port", addr)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, fmt.Errorf("netcut: socket: %w", err)
	}
	// Connections of the port's former process may linger (TIME_WAIT).
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("netcut: %w", err)
	}
	sa := &syscall.SockaddrInet4{Port: ta.Port}
	copy(sa.Addr[:], ip)
	if err := syscall.Bind(fd, sa); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("netcut: bind %s: %w", addr, err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("netcut: listen %s: %w", addr, err)
	}
	filler, err := net.DialTimeout("tcp4", ta.String(), time.Second)
	if err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("netcut: fill %s: %w", addr, err)
	}
	return func() { filler.Close(); syscall.Close(fd) }, nil
}

// HoldPorts holds, as Hold does, the port of addr and the n-1 ports after
// it (a twinlake node's address and its etcd member's client and peer
// ports: n = 3), all or none; release frees them.
func HoldPorts(addr string, n int) (release func(), err error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("netcut: %w", err)
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return nil, fmt.Errorf("netcut: port of %s: %w", addr, err)
	}
	var held []func()
	release = func() {
		for _, r := range held {
			r()
		}
		held = nil
	}
	for k := range n {
		r, err := Hold(net.JoinHostPort(host, strconv.Itoa(port+k)))
		if err != nil {
			release()
			return nil, err
		}
		held = append(held, r)
	}
	return release, nil
}
