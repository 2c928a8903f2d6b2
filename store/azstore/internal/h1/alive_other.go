//go:build !unix

package h1

import "net"

// alive cannot peek at a socket on this system: an idle connection the
// server closed fails on its next request, which is then sent again only
// when it is safe to repeat.
func alive(net.Conn) bool { return true }

// newProbe returns a peek at one connection's socket: here, always idle.
func newProbe(net.Conn) func() sockState { return func() sockState { return sockIdle } }
