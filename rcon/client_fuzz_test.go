package rcon_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/gsq-project/gsq/console/consoletest"
	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// FuzzClientExec lets a logged-in server answer one command with
// arbitrary bytes (the marker "ID!!" becomes the command's id, "NX!!" the
// next id), after, if the mode says so, a full fragment (a Minecraft one
// of 4096 bytes, or an SRCDS one of 4086), then close the connection or
// (one input in eight) go silent with it open. Whatever it sends, the command returns by its deadline (30 ms, on
// the bubble's clock: a hang is a deadlock the bubble reports), never
// panics, and hands back no more than MaxResponseSize.
//
// The fuzzer once spent whole runs (34 inputs in 10 s) on one input: a
// reply of 4 KB, a full Minecraft fragment and a probe's answer
// (testdata/fuzz/FuzzClientExec/minimised-for-minutes), which found new
// coverage and which it then minimised, try after try, each costing a
// loopback server, a login and, for a silent server, 30 ms of real
// waiting. No input made the client itself take long: the slowest of
// some 21,000 took 115 ms of real time, its deadline at 30 ms on a loaded
// machine. So each input now runs in a synctest bubble on an in-memory
// network (a tenth of the cost, and no real waiting), and the mode's full
// fragment lets short inputs reach what took 4 KB, which leaves the
// minimiser little to do.
func FuzzClientExec(f *testing.F) {
	pkt := func(id string, typ int32, body string) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(10+len(body)))
		b = append(b, id...)
		b = binary.LittleEndian.AppendUint32(b, uint32(typ))
		return append(append(b, body...), 0, 0)
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	for _, seed := range []struct {
		mode  byte
		reply []byte
	}{
		{0, pkt("ID!!", 0, "hello\n")},
		{48, cat(pkt("ID!!", 0, "hello\n"), pkt("NX!!", 0, ""), pkt("NX!!", 0, "\x00\x00\x00\x01\x00\x00\x00\x00"))},
		{32, cat(pkt("ID!!", 0, "x"), pkt("NX!!", 0, ""))},
		{0, cat(pkt("ID!!", 0, "hello\n"), pkt("NX!!", 0, ""), pkt("NX!!", 0, "\x00\x00\x00\x01\x00\x00\x00\x00"))},
		{14, cat(pkt("ID!!", 0, "a"), pkt("ID!!", 0, "b"))},
		{0, cat(pkt("\xff\xff\xff\xff", 4, "[rcon] x"), pkt("ID!!", 0, "x\n"), pkt("\xff\xff\xff\xff", 0, ""))},
		{0, pkt("\x00\x00\x00\x00", 0, "palworld")},
		{0, pkt("*\x00\x00\x00", 0, "conan")},
		{14, cat(pkt("ID!!", 1, "chat"), pkt("ID!!", 0, "squad"), []byte("\x0a\x00\x00\x00NX!!\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00"))},
		{1, pkt("ID!!", 0, string(bytes.Repeat([]byte("é"), 2048)))},
		{1, cat(pkt("ID!!", 0, string(bytes.Repeat([]byte("x"), 4096))), pkt("ID!!", 0, "Unknown request 0"))},
		{0, []byte("\xff\xff\xff\x7fID!!")},
		{14, pkt("ID!!", 0, "Server received, But no response!! \n ")},
		{1 | 64, pkt("ID!!", 0, "Unknown request 0")},
		{1 | 64, pkt("NX!!", 0, "")},
		{128, cat(pkt("ID!!", 0, "rest"), pkt("NX!!", 0, ""), pkt("NX!!", 0, "\x00\x00\x00\x01\x00\x00\x00\x00"))},
	} {
		f.Add(seed.mode, seed.reply)
	}
	f.Fuzz(func(t *testing.T, mode byte, reply []byte) {
		bubble(t, func(t *testing.T, n *consoletest.Network) {
			dialect, profile := rcon.DialectSource, rcontest.SRCDS
			if mode&1 != 0 {
				dialect, profile = rcon.DialectMinecraft, rcontest.Minecraft
			}
			silent := mode&14 == 14
			s := script(t, n, profile, nil, func(c *rcontest.Conn) {
				if !c.Login() {
					return
				}
				p, ok := c.ReadPacket()
				if !ok {
					return
				}
				c.NetConn().Write(expandReply(mode, reply, p.ID))
				if silent {
					c.Discard()
				}
			})
			const limit = 1 << 16
			// Bit 4 pipelines (Source), bit 5 gives the srcds profile: the
			// client then trusts what it would otherwise test.
			opts := &rcon.Options{Dialect: dialect, NoReconnect: true, MaxResponseSize: limit, Pipeline: mode&16 != 0}
			if mode&32 != 0 && dialect == rcon.DialectSource {
				opts.Profile = "srcds"
			}
			c := dialOn(t, n, s, opts)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			start := time.Now()
			r, _ := c.Do(ctx, "cmd")
			if took := time.Since(start); took > 30*time.Millisecond {
				t.Fatalf("the command returned after %v; its deadline was 30ms", took)
			}
			if len(r.Body) > limit {
				t.Fatalf("%d bytes of output, limit %d", len(r.Body), limit)
			}
		})
	})
}

// expandReply is the fuzzed reply to the command of id id: a full
// fragment first if mode's bit 6 (Minecraft's) or 7 (SRCDS's) says so,
// then reply with "ID!!" replaced by id and "NX!!" by the next id. A
// packet's size field does not follow: it may lie, as a server's may.
func expandReply(mode byte, reply []byte, id int32) []byte {
	var b []byte
	for _, f := range []struct {
		bit  byte
		size int
	}{{64, rcon.MinecraftFragmentUnits}, {128, rcon.DefaultSourceSplitSize}} {
		if mode&f.bit != 0 {
			b, _ = rcon.Packet{ID: id, Body: bytes.Repeat([]byte("x"), f.size)}.AppendBinary(b)
		}
	}
	r := bytes.ReplaceAll(reply, []byte("ID!!"), binary.LittleEndian.AppendUint32(nil, uint32(id)))
	return append(b, bytes.ReplaceAll(r, []byte("NX!!"), binary.LittleEndian.AppendUint32(nil, uint32(id+1)))...)
}
