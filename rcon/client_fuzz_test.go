package rcon

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzClientExec lets a logged-in server answer one command with
// arbitrary bytes (the marker "ID!!" becomes the command's id, "NX!!" the
// next id), then close the connection or (one input in eight) go silent
// with it open. Whatever it sends, the command returns (by its context's
// deadline when the server goes silent), never panics, and hands back no
// more than MaxResponseSize.
func FuzzClientExec(f *testing.F) {
	pkt := func(id string, typ int32, body string) []byte {
		b := append(le(int32(10+len(body))), id...)
		b = append(b, le(typ)...)
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
	} {
		f.Add(seed.mode, seed.reply)
	}
	f.Fuzz(func(t *testing.T, mode byte, reply []byte) {
		dialect := DialectSource
		if mode&1 != 0 {
			dialect = DialectMinecraft
		}
		silent := mode&14 == 14
		e := emu{password: "pw", dialect: dialect}
		s := startFake(t, func(c *fakeConn) {
			if !e.authSource(c) {
				return
			}
			p, ok := c.read()
			if !ok {
				return
			}
			b := bytes.ReplaceAll(reply, []byte("ID!!"), le(p.ID))
			c.writeRaw(bytes.ReplaceAll(b, []byte("NX!!"), le(p.ID+1)))
			if silent {
				drain(c)
			}
		})
		const limit = 1 << 16
		// Bit 4 pipelines (Source), bit 5 gives the srcds profile: the
		// client then trusts what it would otherwise test.
		opts := &Options{Dialect: dialect, NoReconnect: true, MaxResponseSize: limit, Pipeline: mode&16 != 0}
		if mode&32 != 0 && dialect == DialectSource {
			opts.Profile = "srcds"
		}
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := Dial(dctx, s.addr(), "pw", opts)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// A watchdog, far beyond the command's 30 ms deadline: a command
		// still waiting then is a hang.
		var hung atomic.Bool
		w := time.AfterFunc(10*time.Second, func() { hung.Store(true); c.Close() })
		ctx, cancelDo := context.WithTimeout(context.Background(), 30*time.Millisecond)
		r, _ := c.Do(ctx, "cmd")
		cancelDo()
		w.Stop()
		if hung.Load() {
			t.Fatal("the command did not return within 10 s (its deadline was 30 ms)")
		}
		if len(r.Body) > limit {
			t.Fatalf("%d bytes of output, limit %d", len(r.Body), limit)
		}
	})
}
