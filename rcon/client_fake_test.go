package rcon

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds a small scripted RCON server on 127.0.0.1 for the
// client tests. It is test-only and independent of package rcontest.

// fakeServer accepts connections and runs handle on each.
type fakeServer struct {
	ln       net.Listener
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
	accepted atomic.Int32
}

func startFake(t *testing.T, handle func(*fakeConn)) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			idx := int(s.accepted.Add(1))
			s.mu.Lock()
			s.conns = append(s.conns, nc)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer nc.Close()
				handle(&fakeConn{t: t, nc: nc, rd: NewReader(nc, 0), index: idx})
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

// fakeConn is the server end of one connection.
type fakeConn struct {
	t     *testing.T
	nc    net.Conn
	rd    *Reader
	index int // 1 for the first connection
	chunk int // if > 0, every write is cut into writes of this size
}

// read returns the next packet; ok is false once the client is gone (or
// after 10 s, which bounds every test).
func (c *fakeConn) read() (Packet, bool) {
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	p, err := c.rd.ReadPacket()
	return p, err == nil
}

// send writes pkts in one buffer, so they may coalesce in one segment.
func (c *fakeConn) send(pkts ...Packet) bool {
	var b []byte
	for _, p := range pkts {
		b, _ = p.AppendBinary(b)
	}
	return c.writeRaw(b)
}

func (c *fakeConn) writeRaw(b []byte) bool {
	step := len(b)
	if c.chunk > 0 {
		step = c.chunk
	}
	for len(b) > 0 {
		n := min(step, len(b))
		if _, err := c.nc.Write(b[:n]); err != nil {
			return false
		}
		b = b[n:]
	}
	return true
}

// emu emulates a game server closely enough to exercise the client.
type emu struct {
	password string
	dialect  Dialect
	// respond returns the output of a command (default: "ran <cmd>").
	respond func(cmd string) string
	// chunk cuts every write (hostile segmentation).
	chunk int
	// ignoreProbe drops type-0 packets (Factorio).
	ignoreProbe bool
	// replyID, if set, replaces every reply id (Palworld 0, Conan 42).
	replyID *int32
	// squadTail sends Squad's malformed extra mirror packet.
	squadTail bool
	// mcViolations counts requests that did not arrive as one read of
	// one packet (the vanilla Minecraft parser drops the connection).
	mcViolations *atomic.Int32
	// gate, when set, holds the Minecraft server's reads after the login
	// until it is closed: the server is slow to read, for as long as the
	// test needs.
	gate <-chan struct{}
	// cmds receives every command the server ran, if set.
	cmds chan<- Packet
}

// noAnswer, returned by emu.respond, makes the server ignore the command.
const noAnswer = "\x00no answer"

func (e emu) output(cmd string) string {
	if e.respond != nil {
		return e.respond(cmd)
	}
	return "ran " + cmd
}

func (e emu) id(id int32) int32 {
	if e.replyID != nil {
		return *e.replyID
	}
	return id
}

func (e emu) serve(c *fakeConn) {
	c.chunk = e.chunk
	if e.dialect == DialectMinecraft {
		e.serveMinecraft(c)
		return
	}
	if !e.authSource(c) {
		return
	}
	e.serveCommands(c)
}

// serveCommands answers commands and probes after the login.
func (e emu) serveCommands(c *fakeConn) {
	for {
		p, ok := c.read()
		if !ok {
			return
		}
		switch p.Type {
		case TypeExecCommand:
			if e.cmds != nil {
				e.cmds <- p
			}
			out := e.output(string(p.Body))
			if out == noAnswer {
				continue
			}
			if !c.send(e.sourceReply(p.ID, out)...) {
				return
			}
		case TypeResponseValue:
			if e.ignoreProbe {
				continue
			}
			if !e.mirror(c, p.ID) {
				return
			}
		}
	}
}

// authSource answers the login the SRCDS way (empty RESPONSE_VALUE then
// AUTH_RESPONSE, coalesced) or the CS2 way (AUTH_RESPONSE only).
func (e emu) authSource(c *fakeConn) bool {
	p, ok := c.read()
	if !ok || p.Type != TypeAuth {
		return false
	}
	id := e.id(p.ID)
	if string(p.Body) != e.password {
		id = -1
	}
	var pkts []Packet
	if e.dialect == DialectSource {
		pkts = append(pkts, Packet{ID: e.id(p.ID), Type: TypeResponseValue})
	}
	pkts = append(pkts, Packet{ID: id, Type: TypeAuthResponse})
	return c.send(pkts...) && id != -1
}

// sourceReply splits out into SRCDS-sized packets (CS2: one packet).
func (e emu) sourceReply(id int32, out string) []Packet {
	const maxBody = 4096 - MinPacketSize
	var pkts []Packet
	for {
		n := len(out)
		if e.dialect == DialectSource {
			n = min(n, maxBody)
		}
		pkts = append(pkts, Packet{ID: e.id(id), Type: TypeResponseValue, Body: []byte(out[:n])})
		out = out[n:]
		if out == "" {
			return pkts
		}
	}
}

// mirror answers a probe: the empty mirror, then the extra packet
// (body 0x0000 0001 0000 0000), malformed the Squad way if asked.
func (e emu) mirror(c *fakeConn, id int32) bool {
	b, _ := Packet{ID: e.id(id), Type: TypeResponseValue}.AppendBinary(nil)
	if e.squadTail {
		b = append(b, le(10)...)
		b = append(b, le(e.id(id))...)
		b = append(b, le(0)...)
		b = append(b, 0, 0, 0, 1, 0, 0, 0, 0, 0)
	} else {
		b, _ = Packet{ID: e.id(id), Type: TypeResponseValue, Body: []byte{0, 0, 0, 1, 0, 0, 0, 0}}.AppendBinary(b)
	}
	return c.writeRaw(b)
}

// serveMinecraft mimics vanilla RconClient: one read of at most 1460
// bytes must hold exactly one packet, else the connection is dropped.
func (e emu) serveMinecraft(c *fakeConn) {
	buf := make([]byte, 1460)
	authed := false
	for {
		if authed && e.gate != nil {
			<-e.gate
		}
		c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := c.nc.Read(buf)
		if err != nil {
			return
		}
		p, used, err := ParsePacket(buf[:n], 1460)
		if err != nil || used != n {
			if e.mcViolations != nil {
				e.mcViolations.Add(1)
			}
			return
		}
		switch {
		case p.Type == TypeAuth:
			id := p.ID
			authed = string(p.Body) == e.password && e.password != ""
			if !authed {
				id = -1
			}
			if !c.send(Packet{ID: id, Type: TypeAuthResponse}) {
				return
			}
		case !authed:
			if !c.send(Packet{ID: -1, Type: TypeAuthResponse}) {
				return
			}
		case p.Type == TypeExecCommand:
			if e.cmds != nil {
				e.cmds <- p
			}
			for _, frag := range minecraftFragments(e.output(string(p.Body))) {
				if !c.send(Packet{ID: p.ID, Type: TypeResponseValue, Body: frag}) {
					return
				}
			}
		default:
			body := "Unknown request " + strings.ToLower(strings.TrimLeft(hex32(uint32(p.Type)), "0"))
			if p.Type == 0 {
				body = "Unknown request 0"
			}
			if !c.send(Packet{ID: p.ID, Type: TypeResponseValue, Body: []byte(body)}) {
				return
			}
		}
	}
}

func hex32(v uint32) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b)
}

// minecraftFragments cuts s every 4096 UTF-16 units and encodes each
// chunk as Java would (an unpaired surrogate becomes '?'). Every output,
// even an empty one, gets at least one fragment.
func minecraftFragments(s string) [][]byte {
	units := utf16.Encode([]rune(s))
	var frags [][]byte
	for {
		n := min(len(units), MinecraftFragmentUnits)
		chunk := units[:n]
		units = units[n:]
		var b []byte
		for i := 0; i < len(chunk); i++ {
			u := chunk[i]
			switch {
			case utf16.IsSurrogate(rune(u)) && i+1 < len(chunk) && utf16.DecodeRune(rune(u), rune(chunk[i+1])) != utf8.RuneError:
				b = utf8.AppendRune(b, utf16.DecodeRune(rune(u), rune(chunk[i+1])))
				i++
			case utf16.IsSurrogate(rune(u)):
				b = append(b, '?')
			default:
				b = utf8.AppendRune(b, rune(u))
			}
		}
		frags = append(frags, b)
		if len(units) == 0 {
			return frags
		}
	}
}

// dialEmu starts e and dials it.
func dialEmu(t *testing.T, e emu, opts *Options) (*Client, *fakeServer) {
	t.Helper()
	s := startFake(t, e.serve)
	c, err := Dial(context.Background(), s.addr(), e.password, opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, s
}

// testCtx bounds a test's calls.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// drain reads what is left of a connection until EOF or a bound.
func drain(c *fakeConn) {
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.Copy(io.Discard, c.nc)
}
