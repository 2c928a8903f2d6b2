//go:build unix

package h1

import (
	"net"
	"syscall"
)

// alive reports whether an idle connection can still carry a request: the
// server has not closed it and sent nothing unasked. It peeks at the
// socket without blocking, one system call.
func alive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	ok = false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// Nothing to read and no end of stream: the connection is idle.
		ok = n < 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK)
		return true
	})
	return err == nil && ok
}

// newProbe returns alive for one connection, with what it needs made
// once: checking a pooled connection then allocates nothing.
func newProbe(c net.Conn) func() bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return func() bool { return true }
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return func() bool { return false }
	}
	var (
		buf  [1]byte
		idle bool
	)
	peek := func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		idle = n < 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK)
		return true
	}
	return func() bool {
		idle = false
		return rc.Read(peek) == nil && idle
	}
}
