//go:build interop

package interop_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/Tnze/go-mc/bot"

	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/minecraft/slp"
)

// go-mc v1.20.2's bot.PingAndList reads our Server List Ping fakes: the
// status JSON it gets is the one our client gets, byte for byte (a 100 KB
// status and replies one byte per write included). Where they disagree:
//   - Velocity and BungeeCord close the connection after the status
//     instead of answering the ping (field notes §1.3). go-mc fails the
//     whole exchange then and returns no status; gsq keeps the status and
//     times the status round trip. The proxies are what is deployed, so
//     gsq is right to accept it; this asserts go-mc's behaviour.
//   - The Better Compatibility Checker's trailer after the JSON: go-mc
//     reads the JSON string by its length and ignores the rest of the
//     packet, as gsq does (gsq keeps it raw).
func TestInteropGoMCPing(t *testing.T) {
	for _, name := range []string{"vanilla", "byte-writes", "huge", "bcc", "forge", "velocity"} {
		t.Run(name, func(t *testing.T) {
			srv := mctest.Start(t, name)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			ours, err := (&slp.Client{}).Status(ctx, srv.Addr())
			if err != nil {
				t.Fatal(err)
			}
			js, _, err := bot.PingAndListTimeout(srv.Addr().String(), 10*time.Second)
			if name == "velocity" {
				if err == nil || ours.Pong {
					t.Errorf("go-mc read a proxy's status without its pong (err %v), or we got a pong (%v)", err, ours.Pong)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(js, ours.JSON) {
				t.Errorf("go-mc read %d bytes of JSON, we %d:\n%.200s\n%.200s", len(js), len(ours.JSON), js, ours.JSON)
			}
		})
	}
}
