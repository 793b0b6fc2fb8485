package ogp_test

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/gsq-project/gsq/ogp"
)

// specExchange sends req from a fresh loopback socket to addr and returns
// the one datagram that comes back.
func specExchange(t *testing.T, conn *net.UDPConn, addr netip.AddrPort, req []byte) []byte {
	t.Helper()
	if _, err := conn.WriteToUDPAddrPort(req, addr); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65535)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // a bound; the answer comes at once
	n, _, err := conn.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatalf("no answer to % X: %v", req, err)
	}
	return buf[:n]
}

// TestSpecClient is a client written from the OGP v0.91 specification
// alone, with its bytes spelled out: it asks a Default Query, takes the
// Data of the error 3 answer ("Copy of the OGP request including the new
// challenge number. A client receiving this error code must only send
// this part of the packet back") and sends it back verbatim, which gets
// the answer. One client sends a challenge number of 0 ("Send a challenge
// number of 0 to request a new one"), the other no challenge field at all
// ("If the number is wrong or you don't specify one, you'll get one").
func TestSpecClient(t *testing.T) {
	t.Parallel()
	srv := newServer(t, "v0.91") // an ogp.Server with its defaults
	prefix := []byte{0xFF, 0xFF, 0xFF, 0xFF, 'O', 'G', 'P', 0x00}
	// RequestFlags: bit 0.0 bServerInfo. ServerInfoFields: bit 1.0
	// bHostName, so byte 0 is empty with bit 7 set and byte 1 has bit 0.
	body := []byte{0x01, 0x80, 0x01}
	for _, tc := range []struct {
		name   string
		header []byte // HeadSize, Type, HeadFlags, fields
	}{
		// HeadSize 7: itself, Type, HeadFlags, ChallengeNumber.
		{"challenge 0", []byte{0x07, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00}},
		// HeadSize 3: itself, Type, HeadFlags (no bit set).
		{"no challenge field", []byte{0x03, 0x01, 0x00}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			req := append(append(append([]byte(nil), prefix...), tc.header...), body...)
			ans := specExchange(t, conn, srv.Addr(), req)

			// Error answer: Type 0xFF, HeadFlags bAnswer and
			// bChallengeNumber, then the new ChallengeNumber.
			if !bytes.HasPrefix(ans, prefix) || len(ans) < 16 || ans[9] != 0xFF || ans[10] != 0x03 {
				t.Fatalf("not an error answer with a challenge: % X", ans)
			}
			challenge := binary.LittleEndian.Uint32(ans[11:15])
			errBody := ans[8+int(ans[8]):]
			if errBody[0] != 3 {
				t.Fatalf("ErrorValue %d, want 3 (invalid challenge)", errBody[0])
			}
			data := errBody[1:]
			// The copy of the request holds the new challenge number.
			want := append(append(append([]byte(nil), prefix...), 0x07, 0x01, 0x02), binary.LittleEndian.AppendUint32(nil, challenge)...)
			want = append(want, body...)
			if !bytes.Equal(data, want) {
				t.Errorf("Data % X\nwant % X", data, want)
			}

			ans = specExchange(t, conn, srv.Addr(), data)
			if !bytes.HasPrefix(ans, prefix) || ans[9] != 0x01 || ans[10]&0x01 == 0 {
				t.Fatalf("not a Default Query answer: % X", ans)
			}
			a, err := ogp.ParseAnswer(ans[8+int(ans[8]):], ogp.V091)
			if err != nil || a.Info.HostName.String() != "gsq ogptest server" {
				t.Fatalf("answer %+v, %v", a, err)
			}
		})
	}
}
