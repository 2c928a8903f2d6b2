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

// newProbe returns a peek at one connection's socket, with what it needs
// made once: checking a pooled connection then allocates nothing.
func newProbe(c net.Conn) func() sockState {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return func() sockState { return sockIdle }
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return func() sockState { return sockGone }
	}
	var (
		buf   [1]byte
		state sockState
	)
	peek := func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case n > 0:
			state = sockData
		case n < 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK):
			state = sockIdle
		default: // end of stream, or an error
			state = sockGone
		}
		return true
	}
	return func() sockState {
		state = sockGone
		if rc.Read(peek) != nil {
			return sockGone
		}
		return state
	}
}
