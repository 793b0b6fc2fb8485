// On linux/386 getsockopt goes through socketcall, and syscall has no
// SYS_GETSOCKOPT; the test reads tcp_info directly, so it skips that platform.

//go:build !386

package rcon_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// A command finds the connection closed by the server since it was last
// read, and dials again before it goes out: it is not lost on the dead
// connection, though no reader had seen the close yet; also when a packet
// waits in the socket before the close (an unsolicited line the idle
// reader has not read yet): the command reads it first. Only a real
// socket can be peeked at.
func TestReconnectFirstWhenPeerClosed(t *testing.T) {
	t.Parallel()
	for _, behindData := range []bool{false, true} {
		t.Run(fmt.Sprintf("behind data %v", behindData), func(t *testing.T) {
			t.Parallel()
			answered, closed := make(chan struct{}), make(chan struct{})
			s := rcontest.NewUnstartedServer(rcontest.SRCDS, pw, ran)
			s.Script = answerOneThen("one", func(c *rcontest.Conn) {
				if behindData {
					<-answered // the client has read the answer: what follows stays in the socket
					c.Send(rcon.Packet{ID: -1, Type: rcon.TypeResponseValue, Body: []byte("server shutting down")})
				}
				c.NetConn().Close()
				close(closed)
			})
			s.Start()
			defer s.Close()
			c, err := rcon.Dial(bounded(t), s.Addr().String(), pw, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			mustExec(t, c, "a", "one")
			close(answered)
			<-closed
			// The close reaches the client's socket a moment later (on a
			// loaded machine, the kernel may take a while): a command sent
			// before could not know, and fails, as it may have run.
			for deadline := time.Now().Add(10 * time.Second); !rcon.PeerClosed(c); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the server's close never reached the client's socket")
				}
			}
			// The connection went unread for longer than PeekAfter, and the
			// idle reader has not taken it yet.
			rcon.SetUnread(c, 2*rcon.PeekAfter)
			mustExec(t, c, "b", "ran b")
			if s.Accepted() != 2 {
				t.Fatalf("the command ran on connection %d, want the second", s.Accepted())
			}
		})
	}
}
