//go:build linux

package rcon_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	osexec "os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gsq-project/gsq/rcon"
)

// The tests in this file run a server in a child process (this test
// binary again) under a low limit on open files, as only a process of
// its own can have, and talk to it over loopback.

// fdChildEnv tells the child process which test it serves.
const fdChildEnv = "GSQ_RCON_FD_CHILD"

// fdChild is a server in a child process; lines are what it prints.
type fdChild struct {
	t      *testing.T
	cmd    *osexec.Cmd
	stdin  io.Closer
	lines  chan string
	output []string
	addr   string
}

// startFDChild runs test in a child process, which serves until its
// standard input is closed (see serveInChild).
func startFDChild(t *testing.T, test string) *fdChild {
	t.Helper()
	cmd := osexec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), fdChildEnv+"="+test)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	c := &fdChild{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 64)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	c.addr = c.await("ADDR ")
	return c
}

// await returns the rest of the child's first line with the prefix.
func (c *fdChild) await(prefix string) string {
	c.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("child ended before %q:\n%s", prefix, strings.Join(c.output, "\n"))
			}
			c.output = append(c.output, line)
			if strings.HasPrefix(line, "SERVE ") && prefix != "SERVE " {
				c.t.Fatalf("Serve returned before the test ended it:\n%s", strings.Join(c.output, "\n"))
			}
			if strings.HasPrefix(line, prefix) {
				return strings.TrimPrefix(line, prefix)
			}
		case <-timeout:
			c.t.Fatalf("no %q from the child after 30s:\n%s", prefix, strings.Join(c.output, "\n"))
		}
	}
}

// stop ends the child and checks that Serve returned ErrServerClosed.
func (c *fdChild) stop() {
	c.t.Helper()
	c.stdin.Close()
	if got := c.await("SERVE "); got != rcon.ErrServerClosed.Error() {
		c.t.Errorf("Serve returned %q, want %q", got, rcon.ErrServerClosed)
	}
	for range c.lines { // drain, so Wait does not block on the pipe
	}
	if err := c.cmd.Wait(); err != nil {
		c.t.Errorf("child: %v\n%s", err, strings.Join(c.output, "\n"))
	}
}

// serveInChild is the child process: it listens, sets its limit on open
// files with limit (given how many are open), serves s, and prints its
// address, its log lines and what Serve returned, until its standard
// input is closed.
func serveInChild(t *testing.T, s *rcon.Server, limit func(open int) uint64) {
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	lim := syscall.Rlimit{Cur: limit(len(open)), Max: limit(len(open))}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	s.Password, s.Handler = testPassword, sim
	s.Logf = func(format string, args ...any) { say("LOG "+format, args...) }
	served := make(chan struct{})
	go func() {
		defer close(served)
		say("SERVE %v", s.Serve(l))
	}()
	say("ADDR %s", l.Addr())
	io.Copy(io.Discard, os.Stdin)
	s.Close()
	<-served
}

// TestServerAcceptsAgainAfterFDExhaustion fills the descriptors of a
// server whose limit leaves room for about a dozen connections with
// connections that log in (so none can be closed to make room), and
// checks that once they are gone the server accepts and serves a new
// one: running out of descriptors is waited out, not the end of Serve.
func TestServerAcceptsAgainAfterFDExhaustion(t *testing.T) {
	if os.Getenv(fdChildEnv) == t.Name() {
		serveInChild(t, &rcon.Server{MaxConns: -1, MaxConnsPerAddr: -1}, func(open int) uint64 { return uint64(open + 16) })
		return
	}
	t.Parallel()
	child := startFDChild(t, t.Name())
	login, _ := rcon.Packet{ID: 1, Type: rcon.TypeAuth, Body: []byte(testPassword)}.MarshalBinary()
	var flood []net.Conn
	for range 64 {
		c, err := net.Dial("tcp", child.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(login)
		flood = append(flood, c)
	}
	if line := child.await("LOG rcon: accept: "); !strings.Contains(line, "too many open files") {
		t.Fatalf("accept error %q, want EMFILE", line)
	}
	for _, c := range flood {
		c.Close()
	}
	// The server waits at most a second between attempts; a new
	// connection is accepted and served once the old ones are gone.
	var loginErr error
	for range 5 {
		c, err := rcon.Dial(context.Background(), child.addr, testPassword, &rcon.Options{Timeout: 5 * time.Second})
		if loginErr = err; err == nil {
			if out, err := c.Exec(context.Background(), "echo back"); err != nil || out != "back\n" {
				t.Errorf("Exec after recovery = %q, %v", out, err)
			}
			c.Close()
			break
		}
	}
	if loginErr != nil {
		t.Fatalf("no login after the descriptors were freed: %v\n%s", loginErr, strings.Join(child.output, "\n"))
	}
	child.stop()
}

// TestServerHalfOpenFloodUnderLowDescriptorLimit is the attack of issue
// 19: a server limited to 100 open files (prlimit --nofile=100), 160
// connections that never log in from 20 addresses, reopened as soon as
// the server closes them, and an administrator who logs in and runs a
// command, 8 times over. Every login and every command must succeed:
// the cap on connections (half the limit) decides which connection goes
// before the descriptors run out, and the connection that goes is one of
// the flood's, from the addresses holding the most.
func TestServerHalfOpenFloodUnderLowDescriptorLimit(t *testing.T) {
	if os.Getenv(fdChildEnv) == t.Name() {
		serveInChild(t, &rcon.Server{}, func(int) uint64 { return 100 })
		return
	}
	t.Parallel()
	child := startFDChild(t, t.Name())
	ctx, stop := context.WithCancel(context.Background())
	var attackers sync.WaitGroup
	var opened sync.WaitGroup
	for a := range 20 {
		from := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+a))}
		for range 8 {
			opened.Add(1)
			attackers.Go(func() {
				d := net.Dialer{LocalAddr: from}
				first := true
				for ctx.Err() == nil {
					c, err := d.DialContext(ctx, "tcp", child.addr)
					if first {
						first = false
						opened.Done()
					}
					if err != nil {
						continue
					}
					stopRead := context.AfterFunc(ctx, func() { c.Close() })
					io.Copy(io.Discard, c) // until the server closes it
					stopRead()
					c.Close()
				}
			})
		}
	}
	opened.Wait()
	child.await("LOG rcon: ") // the server is making room
	admin := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 100)}}
	for i := range 8 {
		c, err := rcon.Dial(context.Background(), child.addr, testPassword, &rcon.Options{
			Timeout: 5 * time.Second, NoReconnect: true, DialContext: admin.DialContext,
		})
		if err != nil {
			t.Errorf("login %d under the flood: %v", i+1, err)
			continue
		}
		if out, err := c.Exec(context.Background(), fmt.Sprint("echo ", i)); err != nil || out != fmt.Sprint(i, "\n") {
			t.Errorf("command %d under the flood: %q, %v", i+1, out, err)
		}
		c.Close()
	}
	stop()
	attackers.Wait()
	child.stop()
	if t.Failed() {
		t.Logf("server log:\n%s", strings.Join(child.output, "\n"))
	}
}
