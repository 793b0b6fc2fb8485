package bedrock_test

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/bedrock"
	"github.com/gsq-project/gsq/minecraft/mctest"
)

func TestProfiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, motd, version string
		online              int32
	}{
		{"bedrock", "gsq Bedrock server", "1.21.40", 2},
		{"bedrock-empty-version", "§r§4G§r§6a§r§ey§r§2B§r§1o§r§9w§r§ds§r§4e§r§6r", "", 1},
		{"pocketmine", "PocketMine-MP Server", "1.21.40", 2},
		{"geyser", "gsq Bedrock server", "1.21.40", 2},
	} {
		r, err := (&bedrock.Client{}).Status(testutil.Context(t), mctest.Start(t, tc.name).BedrockAddr())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		s := r.Status
		if s.MOTD.String() != tc.motd || s.Version.String() != tc.version || *s.Online != tc.online ||
			r.Transport != bedrock.TransportRakNet || r.Pong.ServerGUID != -305653527360353208 {
			t.Errorf("%s: %+v", tc.name, s)
		}
	}
}

func TestBedrockTimeoutAndUnreachable(t *testing.T) {
	t.Parallel()
	silent, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	addr := silent.LocalAddr().(*net.UDPAddr).AddrPort()
	_, err = (&bedrock.Client{Timeout: 20 * time.Millisecond, Retries: -1}).Status(testutil.Context(t), addr)
	if !errors.Is(err, bedrock.ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) || !neterr.IsTimeout(err) {
		t.Errorf("silent: %v", err)
	}
	closed, _ := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	caddr := closed.LocalAddr().(*net.UDPAddr).AddrPort()
	closed.Close()
	if _, err = (&bedrock.Client{}).Status(testutil.Context(t), caddr); !errors.Is(err, bedrock.ErrUnreachable) {
		t.Errorf("closed port: %v", err)
	}
}

// A pong that echoes another time is not an answer; the one that echoes
// the ping's is, even after other datagrams.
func TestPongMatching(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	status, _ := mctest.DefaultBedrockStatus().AppendStatus(nil)
	go func() {
		buf := make([]byte, 64)
		n, from, err := pc.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		ping, err := bedrock.ParsePing(buf[:n])
		if err != nil {
			return
		}
		stray, _ := bedrock.Pong{Time: ping.Time + 1000, Status: []byte("MCPE;stray;1;1;1;1;")}.AppendBinary(nil)
		good, _ := bedrock.Pong{Time: ping.Time, Status: status}.AppendBinary(nil)
		pc.WriteToUDPAddrPort(stray, from)
		pc.WriteToUDPAddrPort([]byte("junk"), from)
		pc.WriteToUDPAddrPort(good, from)
	}()
	r, err := (&bedrock.Client{}).Status(testutil.Context(t), pc.LocalAddr().(*net.UDPAddr).AddrPort())
	if err != nil || r.Status.MOTD.String() != "gsq Bedrock server" {
		t.Fatalf("%+v %v", r, err)
	}
}

// Hostile: a pong of 64 KiB (as large as a datagram gets) is refused by
// its length, a typed error at once.
func TestHostileHugePong(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 64)
		n, from, err := pc.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		ping, err := bedrock.ParsePing(buf[:n])
		if err != nil {
			return
		}
		pong, _ := bedrock.Pong{Time: ping.Time}.AppendBinary(nil)
		pong[len(pong)-2], pong[len(pong)-1] = 0xFF, 0xFF
		pong = append(pong, make([]byte, 65507-len(pong))...) // the largest IPv4 UDP payload
		if _, err := pc.WriteToUDPAddrPort(pong, from); err != nil {
			t.Error(err)
		}
	}()
	_, err = (&bedrock.Client{Timeout: 5 * time.Second}).Status(testutil.Context(t), pc.LocalAddr().(*net.UDPAddr).AddrPort())
	var pe *bedrock.ParseError
	if !errors.Is(err, bedrock.ErrTooLarge) || !errors.As(err, &pe) {
		t.Errorf("%v, want a *ParseError wrapping ErrTooLarge", err)
	}
}
