//go:build !unix

package rcon

import "net"

// peek reports neither a close nor pending data: where sockets cannot be
// peeked at without reading, a closed connection is found when it is
// read.
func peek(net.Conn) (closed, pending bool) { return false, false }
