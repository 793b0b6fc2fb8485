package peertest

import (
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Dialogue is an interactive peer (Debian's telnet) driven as a person
// would drive it: lines sent on its stdin, and waits for what it prints.
type Dialogue struct {
	t          testing.TB
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	got        chan string
	transcript strings.Builder
}

// Talk starts bin with args. The peer is killed at the end of the test.
func Talk(t testing.TB, bin string, args ...string) *Dialogue {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	d := &Dialogue{t: t, cmd: cmd, stdin: stdin, got: make(chan string, 64)}
	go func() {
		defer close(d.got)
		buf := make([]byte, 4096)
		for {
			n, err := stdout.Read(buf)
			if n > 0 {
				d.got <- string(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	return d
}

// Send writes line and a line feed to the peer's stdin.
func (d *Dialogue) Send(line string) { io.WriteString(d.stdin, line+"\n") }

// Expect waits up to 10 s for the peer's output to hold want; it ends the
// test, with the transcript, when it does not.
func (d *Dialogue) Expect(want string) {
	d.t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(d.transcript.String(), want) {
		select {
		case chunk, ok := <-d.got:
			if !ok {
				d.t.Fatalf("%s ended before %q:\n%s", d.cmd.Path, want, d.transcript.String())
			}
			d.transcript.WriteString(chunk)
		case <-deadline:
			d.t.Fatalf("no %q from %s:\n%s", want, d.cmd.Path, d.transcript.String())
		}
	}
}

// End waits up to 10 s for the peer to end (after its last command) and
// returns all it printed.
func (d *Dialogue) End() string {
	d.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case chunk, ok := <-d.got:
			if !ok {
				d.cmd.Wait()
				return d.transcript.String()
			}
			d.transcript.WriteString(chunk)
		case <-deadline:
			d.t.Fatalf("%s did not end:\n%s", d.cmd.Path, d.transcript.String())
		}
	}
}
