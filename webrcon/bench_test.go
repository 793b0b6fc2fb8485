package webrcon_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/gsq-project/gsq/webrcon"
	"github.com/gsq-project/gsq/webrcon/webrcontest"
)

func BenchmarkReadFrame(b *testing.B) {
	f, _ := webrcon.Frame{Fin: true, Op: webrcon.OpText, Masked: true, Key: [4]byte{1, 2, 3, 4}, Payload: bytes.Repeat([]byte("x"), 1024)}.AppendBinary(nil)
	r := bytes.NewReader(f)
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		r.Reset(f)
		if _, err := webrcon.ReadFrame(r, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExec is one command and its reply over loopback TCP to the
// Rust fake, JSON both ways.
func BenchmarkExec(b *testing.B) {
	s := webrcontest.NewServer(webrcontest.Rust, "pw", nil)
	defer s.Close()
	c, err := webrcon.Dial(context.Background(), s.Addr().String(), "pw", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Exec(context.Background(), "echo hello"); err != nil {
			b.Fatal(err)
		}
	}
}
