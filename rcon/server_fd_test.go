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

// fdChildEnv marks the process TestServerAcceptsAgainAfterFDExhaustion
// starts to run the server with few file descriptors.
const fdChildEnv = "GSQ_RCON_FD_CHILD"

// TestServerAcceptsAgainAfterFDExhaustion runs a server in a child
// process (this test binary again) whose file descriptor limit leaves
// room for about a dozen connections, fills it with connections that
// never log in, and checks that once they are gone the server accepts
// and serves a new one: running out of descriptors is waited out, not
// the end of Serve.
func TestServerAcceptsAgainAfterFDExhaustion(t *testing.T) {
	if os.Getenv(fdChildEnv) != "" {
		fdChild(t)
		return
	}
	t.Parallel()
	cmd := osexec.Command(os.Args[0], "-test.run=^TestServerAcceptsAgainAfterFDExhaustion$", "-test.count=1")
	cmd.Env = append(os.Environ(), fdChildEnv+"=1")
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
	defer cmd.Process.Kill()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var output []string
	// await returns the first line of the child with the prefix.
	await := func(prefix string) string {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("child ended before %q:\n%s", prefix, strings.Join(output, "\n"))
				}
				output = append(output, line)
				if strings.HasPrefix(line, "SERVE ") && prefix != "SERVE " {
					t.Fatalf("Serve returned before the test ended it:\n%s", strings.Join(output, "\n"))
				}
				if strings.HasPrefix(line, prefix) {
					return strings.TrimPrefix(line, prefix)
				}
			case <-timeout:
				t.Fatalf("no %q from the child after 30s:\n%s", prefix, strings.Join(output, "\n"))
			}
		}
	}

	addr := await("ADDR ")
	var flood []net.Conn
	for range 64 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		flood = append(flood, c)
	}
	if line := await("LOG rcon: accept: "); !strings.Contains(line, "too many open files") {
		t.Fatalf("accept error %q, want EMFILE", line)
	}
	for _, c := range flood {
		c.Close()
	}
	// The server waits at most a second between attempts; a new
	// connection is accepted and served once the old ones are gone.
	var loginErr error
	for range 5 {
		c, err := rcon.Dial(context.Background(), addr, testPassword, &rcon.Options{Timeout: 5 * time.Second})
		if loginErr = err; err == nil {
			if out, err := c.Exec(context.Background(), "echo back"); err != nil || out != "back\n" {
				t.Errorf("Exec after recovery = %q, %v", out, err)
			}
			c.Close()
			break
		}
	}
	if loginErr != nil {
		t.Fatalf("no login after the descriptors were freed: %v\n%s", loginErr, strings.Join(output, "\n"))
	}
	stdin.Close()
	if got := await("SERVE "); got != rcon.ErrServerClosed.Error() {
		t.Errorf("Serve returned %q, want %q", got, rcon.ErrServerClosed)
	}
	for range lines { // drain, so Wait does not block on the pipe
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("child: %v\n%s", err, strings.Join(output, "\n"))
	}
}

// fdChild is the child process: it listens, lowers its descriptor limit
// to what it uses plus 16, serves, and prints its address, its log lines
// and what Serve returned, until its standard input is closed.
func fdChild(t *testing.T) {
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
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = uint64(len(open) + 16)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	s := &rcon.Server{
		Password:        testPassword,
		Handler:         sim,
		MaxConns:        -1,
		MaxConnsPerAddr: -1,
		LoginTimeout:    -1, // only the client's closing frees descriptors
		Logf:            func(format string, args ...any) { say("LOG "+format, args...) },
	}
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
