package mcquery_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/mcquery"
	"github.com/gsq-project/gsq/minecraft/mctest"
)

func TestVanillaQuery(t *testing.T) {
	t.Parallel()
	srv := mctest.Start(t, "vanilla")
	c := &mcquery.Client{}
	full, _, err := c.FullStat(testutil.Context(t), srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if full.MOTD().String() != "A gsq §6§lMinecraft§r server" || full.NumPlayers() != 3 || full.MaxPlayers() != 20 || len(full.Players) != 3 {
		t.Errorf("%+v", full)
	}
	if v, _ := full.Value("game_id"); v.String() != "MINECRAFT" {
		t.Errorf("game_id %q", v)
	}
	basic, _, err := c.BasicStat(testutil.Context(t), srv.Addr())
	if err != nil || basic.NumPlayers != 3 || basic.HostPort != 25565 || basic.Map.String() != "world" {
		t.Errorf("%+v %v", basic, err)
	}
}

// A query is a handshake and a stat: two requests.
func TestRequests(t *testing.T) {
	t.Parallel()
	srv := mctest.Start(t, "vanilla")
	if _, _, err := (&mcquery.Client{}).FullStat(testutil.Context(t), srv.Addr()); err != nil {
		t.Fatal(err)
	}
	if n := srv.Received(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// The Client keeps a server's token for its next call on the same
// socket: the second query is the stat alone. A closed Client fails with
// ErrClientClosed.
func TestClientKeepsToken(t *testing.T) {
	t.Parallel()
	srv := mctest.Start(t, "vanilla")
	c := &mcquery.Client{}
	for i, want := range []int64{2, 3} {
		if _, _, err := c.FullStat(testutil.Context(t), srv.Addr()); err != nil {
			t.Fatal(err)
		}
		if n := srv.Received(); n != want {
			t.Errorf("call %d: %d requests in all, want %d", i, n, want)
		}
	}
	c.Close()
	if _, _, err := c.BasicStat(testutil.Context(t), srv.Addr()); !errors.Is(err, mcquery.ErrClientClosed) {
		t.Errorf("closed: %v", err)
	}
}

func TestGeyserAndPocketMine(t *testing.T) {
	t.Parallel()
	full, _, err := (&mcquery.Client{}).FullStat(testutil.Context(t), mctest.Start(t, "geyser").Addr())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(full.MOTD(), []byte("Geyser \x00 \xa7bserver \xe9")) || string(full.KV[0].Key) != "gametype" || full.NumPlayers() != 2 {
		t.Errorf("%q %+v", full.MOTD(), full)
	}
	if got := full.MOTD().UTF8(); got != "Geyser \x00 §bserver é" {
		t.Errorf("UTF8 %q", got)
	}
	// PocketMine answers Query on its Bedrock port, with negative tokens
	// half the time: ask until one was negative.
	srv := mctest.Start(t, "pocketmine")
	var negative bool
	for i := 0; i < 64 && !negative; i++ {
		var tok int32
		c := &mcquery.Client{SessionID: uint32(i), Debug: func(dir string, _ netip.AddrPort, b []byte) {
			if dir == "recv" && b[0] == mcquery.TypeHandshake {
				_, tok, _ = mcquery.ParseHandshakeReply(b)
			}
		}}
		if _, _, err := c.BasicStat(testutil.Context(t), srv.BedrockAddr()); err != nil {
			t.Fatalf("token %d: %v", tok, err)
		}
		negative = tok < 0
	}
	if !negative {
		t.Error("no negative token in 64 handshakes")
	}
}

// A server that drops stale tokens without a word: the client handshakes
// again once after the silent stat.
func TestStaleToken(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := mctest.LookupProfile("vanilla")
	srv := &mcquery.Server{Handler: p.QueryHandler(), RateLimit: -1}
	var handshakes atomic.Int64
	var dropFirst atomic.Bool
	dropFirst.Store(true)
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			b := buf[:n]
			if b[2] == mcquery.TypeHandshake {
				handshakes.Add(1)
			} else if dropFirst.Swap(false) {
				continue // the token went stale: no reply
			}
			srv.HandlePacket(pc, from, b)
		}
	}()
	t.Cleanup(func() { pc.Close() })
	// The dropped request costs one Timeout; a second is long enough for
	// the new handshake and the stat on a loaded machine (100 ms was not,
	// at load 40).
	c := &mcquery.Client{Timeout: time.Second, Retries: -1}
	full, _, err := c.FullStat(testutil.Context(t), pc.LocalAddr().(*net.UDPAddr).AddrPort())
	if err != nil || full.NumPlayers() != 3 {
		t.Fatalf("%+v %v", full, err)
	}
	if n := handshakes.Load(); n != 2 {
		t.Errorf("%d handshakes, want 2", n)
	}
}

func TestQueryTimeoutAndUnreachable(t *testing.T) {
	t.Parallel()
	silent, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	addr := silent.LocalAddr().(*net.UDPAddr).AddrPort()
	_, _, err = (&mcquery.Client{Timeout: 20 * time.Millisecond, Retries: -1}).BasicStat(testutil.Context(t), addr)
	var op *mcquery.OpError
	if !errors.Is(err, mcquery.ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) || !neterr.IsTimeout(err) || !errors.As(err, &op) || op.Op != "basic-stat" {
		t.Errorf("silent: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, _, err = (&mcquery.Client{Timeout: time.Minute}).FullStat(ctx, addr); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, mcquery.ErrTimeout) {
		t.Errorf("context deadline: %v", err)
	}
	closed, _ := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	caddr := closed.LocalAddr().(*net.UDPAddr).AddrPort()
	closed.Close()
	// The kernel rate-limits ICMP errors host-wide (net.ipv4.icmp_msgs_per_sec):
	// with other tests sending to closed ports at once, one may not come,
	// and the ask times out. Three tries; a timeout is the only other
	// outcome allowed, and one must be unreachable.
	for try := 1; ; try++ {
		_, _, err = (&mcquery.Client{Timeout: 200 * time.Millisecond, Retries: -1}).BasicStat(testutil.Context(t), caddr)
		if errors.Is(err, mcquery.ErrUnreachable) {
			break
		}
		if !errors.Is(err, mcquery.ErrTimeout) || try == 3 {
			t.Errorf("closed port, try %d: %v", try, err)
			break
		}
	}
	// A server that answers with what is not Query.
	go func() {
		buf := make([]byte, 64)
		for {
			_, from, err := silent.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			silent.WriteToUDPAddrPort([]byte("\xff\xff\xff\xffI not query"), from)
		}
	}()
	if _, _, err = (&mcquery.Client{Timeout: 20 * time.Millisecond, Retries: -1}).BasicStat(testutil.Context(t), addr); !errors.Is(err, mcquery.ErrNotQuery) {
		t.Errorf("not Query: %v", err)
	}
}

// Hostile: a full stat whose key list never ends is a typed error at once,
// not a wait.
func TestHostileEndlessKeys(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 64)
		for {
			n, from, err := pc.ReadFromUDPAddrPort(buf)
			if err != nil || n < 7 {
				return
			}
			sid := buf[3:7]
			if buf[2] == mcquery.TypeHandshake {
				pc.WriteToUDPAddrPort(append(append([]byte{9}, sid...), "12345\x00"...), from)
				continue
			}
			reply := append(append([]byte{0}, sid...), "splitnum\x00\x80\x00"...)
			for len(reply) < 60000 {
				reply = append(reply, "key\x00value\x00"...)
			}
			pc.WriteToUDPAddrPort(reply, from)
		}
	}()
	_, _, err = (&mcquery.Client{Timeout: 5 * time.Second}).FullStat(testutil.Context(t), pc.LocalAddr().(*net.UDPAddr).AddrPort())
	var pe *mcquery.ParseError
	if !errors.Is(err, mcquery.ErrTruncated) || !errors.As(err, &pe) || neterr.IsTimeout(err) {
		t.Errorf("%v, want a *ParseError wrapping ErrTruncated", err)
	}
}
