//go:build !unix

package rcon

import "net"

// peerClosed reports false: where sockets cannot be peeked at without
// reading, a closed connection is found when it is read.
func peerClosed(net.Conn) bool { return false }
