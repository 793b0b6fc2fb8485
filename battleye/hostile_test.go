package battleye_test

import (
	"errors"
	"net"
	"testing"

	"github.com/gsq-project/gsq/battleye"
	"github.com/gsq-project/gsq/internal/testutil"
)

// A server that logs anyone in and answers every command with 255 parts
// of 60,000 bytes (15 MB in all, claimed in the first part): the client
// stops at MaxResponseSize and holds no more.
func TestLyingMultiPartIsBounded(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 65536)
		big := make([]byte, 60000)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			p, err := battleye.ParsePacket(buf[:n])
			if err != nil {
				continue
			}
			switch {
			case p.Type == battleye.TypeLogin:
				ok, _ := battleye.Packet{Type: battleye.TypeLogin, Data: []byte{1}}.AppendBinary(nil)
				pc.WriteTo(ok, from)
			case p.Type == battleye.TypeCommand && len(p.Data) > 0:
				for i := range 255 {
					part, _ := battleye.Packet{Type: battleye.TypeCommand, Seq: p.Seq, Total: 255, Index: byte(i), Data: big}.AppendBinary(nil)
					if _, err := pc.WriteTo(part, from); err != nil {
						return
					}
				}
			}
		}
	}()
	c, err := battleye.Dial(testutil.Context(t), pc.LocalAddr().String(), "pw", &battleye.Options{MaxResponseSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Exec(testutil.Context(t), "players")
	var se *battleye.SizeError
	if !errors.Is(err, battleye.ErrResponseTooLarge) || !errors.As(err, &se) || se.Size > 1<<20+60000 {
		t.Fatalf("lying server: %v", err)
	}
}
