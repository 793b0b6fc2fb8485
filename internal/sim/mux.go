package sim

import (
	"net/netip"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/ogp"
)

// PacketHandler answers the datagrams of one protocol: *a2s.Server and
// *a2stest.Responder are A2S ones.
type PacketHandler interface {
	HandlePacket(w a2s.PacketWriter, from netip.AddrPort, b []byte)
}

// Mux is the demultiplexer of a simulated server's UDP port, where A2S and
// OGP share one socket, as on real servers that speak both: every
// datagram of either starts with 0xFFFFFFFF, and an OGP one goes on with
// "OGP\x00". `gsq serve`, its fleet, and the tests use it.
type Mux struct {
	A2S PacketHandler // nil: A2S datagrams are ignored
	OGP *ogp.Server   // nil: OGP datagrams are ignored
}

// HandlePacket hands datagram b from from to the protocol it belongs to,
// which writes its replies to w. It does not retain b.
func (m *Mux) HandlePacket(w a2s.PacketWriter, from netip.AddrPort, b []byte) {
	if ogp.Is(b) {
		if m.OGP != nil {
			m.OGP.HandlePacket(w, from, b)
		}
		return
	}
	if m.A2S != nil {
		m.A2S.HandlePacket(w, from, b)
	}
}
