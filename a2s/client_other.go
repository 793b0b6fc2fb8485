//go:build !linux

package a2s

import (
	"net"
	"net/netip"
)

// batchReader is only implemented on Linux (recvmmsg).
type batchReader struct{}

func newBatchReader(*net.UDPConn, int, int) *batchReader { return nil }

func (*batchReader) run(func(netip.AddrPort, []byte), func()) error { panic("unreachable") }

// batchWriter is only implemented on Linux (sendmmsg).
type batchWriter struct {
	failed func(netip.AddrPort, error)
}

func newBatchWriter(*net.UDPConn) *batchWriter { return nil }

func (*batchWriter) write([]byte, netip.AddrPort) error { panic("unreachable") }

func (*batchWriter) hold([]byte, netip.AddrPort) (bool, error) { panic("unreachable") }

func (*batchWriter) tryHold() bool { panic("unreachable") }

func (*batchWriter) flush() error { panic("unreachable") }

var errNotBatched error
