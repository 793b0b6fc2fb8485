//go:build !linux

package a2s

import (
	"net"
	"net/netip"
)

// batchReader is only implemented on Linux (recvmmsg).
type batchReader struct{}

func newBatchReader(*net.UDPConn, int) *batchReader { return nil }

func (*batchReader) run(func(netip.AddrPort, []byte)) error { panic("unreachable") }

// batchWriter is only implemented on Linux (sendmmsg).
type batchWriter struct{}

func newBatchWriter(*net.UDPConn) *batchWriter { return nil }

func (*batchWriter) write([]byte, netip.AddrPort) error { panic("unreachable") }

var errNotBatched error
