package sdtd_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/sdtd"
)

// hostile is a console that logs anyone in and answers every command
// with answer(w), forever if it likes; it reports how much it wrote.
func hostile(t *testing.T, answer func(w io.Writer) error) (addr string, written <-chan int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	out := make(chan int64, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		cw := &countWriter{w: c}
		br := bufio.NewReader(c)
		io.WriteString(cw, sdtd.PasswordPrompt+"\r\n")
		br.ReadString('\n')
		io.WriteString(cw, sdtd.LogonSuccessful+"\r\n*** Connected with 7DTD server.\r\nPress 'help' to get a list of all commands. Press 'exit' to end session.\r\n")
		br.ReadString('\n')
		answer(cw)
		out <- cw.n
	}()
	return l.Addr().String(), out
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// An answer that never ends: the client stops at MaxResponseSize, holding
// no more, and hangs up.
func TestEndlessAnswerIsBounded(t *testing.T) {
	t.Parallel()
	addr, written := hostile(t, func(w io.Writer) error {
		line := []byte(strings.Repeat("y", 100) + "\r\n")
		for {
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
	})
	c, err := sdtd.Dial(testutil.Context(t), addr, "pw", &sdtd.Options{MaxResponseSize: 1 << 20, NoReconnect: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = c.Exec(testutil.Context(t), "version")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, sdtd.ErrResponseTooLarge) {
		t.Fatalf("endless answer: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("%d MB allocated against a 1 MB limit", alloc>>20)
	}
	c.Close()
	if n := <-written; n > 256<<20 {
		t.Errorf("the peer wrote %d MB", n>>20)
	}
}

// A line that never ends is cut at MaxLineLength and read on without
// being held; the command ends at its deadline.
func TestEndlessLineIsBounded(t *testing.T) {
	t.Parallel()
	addr, _ := hostile(t, func(w io.Writer) error {
		chunk := []byte(strings.Repeat("z", 4096))
		for {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
	})
	c, err := sdtd.Dial(testutil.Context(t), addr, "pw", &sdtd.Options{MaxLineLength: 1024, NoReconnect: true, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = c.Exec(context.Background(), "version") // ends at Options.Timeout
	runtime.ReadMemStats(&after)
	if !errors.Is(err, sdtd.ErrTimeout) {
		t.Fatalf("endless line: %v", err)
	}
	// The reader reads in 4 KiB pieces and keeps at most the line limit.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("%d MB allocated for an endless line cut at 1 KiB", alloc>>20)
	}
}
