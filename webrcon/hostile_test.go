package webrcon_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/webrcon"
	"github.com/gsq-project/gsq/webrcon/webrcontest"
)

// A peer that upgrades and then sends one message without end, fragment
// after fragment: the client gives up at its limit, holding no more, and
// the peer finds the connection closed.
func TestEndlessMessageIsBounded(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	written := make(chan int64, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		key := req.Header.Get("Sec-WebSocket-Key")
		c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + webrcon.AcceptKey(key) + "\r\n\r\n"))
		first, _ := webrcon.Frame{Op: webrcon.OpText, Payload: []byte(`{"Message":"`)}.AppendBinary(nil)
		more, _ := webrcon.Frame{Op: webrcon.OpContinuation, Payload: []byte(strings.Repeat("x", 4096))}.AppendBinary(nil)
		n, _ := c.Write(first)
		total := int64(n)
		for {
			n, err := c.Write(more)
			total += int64(n)
			if err != nil {
				written <- total
				return
			}
		}
	}()
	c, err := webrcon.Dial(testutil.Context(t), l.Addr().String(), "pw", &webrcon.Options{MaxMessageSize: 1 << 20, NoReconnect: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = c.Exec(testutil.Context(t), "serverinfo")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, webrcon.ErrMessageTooLarge) {
		t.Fatalf("endless message: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("%d MB allocated against a 1 MB limit", alloc>>20)
	}
	if n := <-written; n > 64<<20 {
		t.Errorf("the peer wrote %d MB before the client hung up", n>>20)
	}
}

// The Rust fake never answers a ping, as Rust does not
// (MrGraversen/rust-rcon#1): after a ping and a request, the first frame
// back is the reply.
func TestFakeNeverPongs(t *testing.T) {
	t.Parallel()
	s, _ := start(t, webrcontest.Rust, "pw")
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /pw HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 || resp.Header.Get("Sec-WebSocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("upgrade: %v, %v", resp, err)
	}
	ping, _ := webrcon.Frame{Fin: true, Op: webrcon.OpPing, Masked: true, Key: [4]byte{1, 2, 3, 4}, Payload: []byte("are you there")}.AppendBinary(nil)
	req, _ := webrcon.Frame{Fin: true, Op: webrcon.OpText, Masked: true, Key: [4]byte{5, 6, 7, 8}, Payload: []byte(`{"Identifier":1001,"Message":"echo hi","Name":"WebRcon"}`)}.AppendBinary(nil)
	c.Write(append(ping, req...))
	f, err := webrcon.ReadFrame(br, 1<<20)
	if err != nil || f.Op != webrcon.OpText || !strings.Contains(string(f.Payload), `"Identifier":1001`) {
		t.Fatalf("first frame after a ping: %v %q, %v", f.Op, f.Payload, err)
	}
}
