package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"golang.org/x/term"
)

// promptPassword asks for the password on the controlling terminal
// without echoing it. Ctrl-C (which cancels ctx) gives up and puts the
// terminal back as it was.
func promptPassword(ctx context.Context, env *Env, server string) (string, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return "", usageError("no RCON password, and no terminal to ask for one: %v", err)
	}
	defer tty.Close()
	fd := int(tty.Fd())
	state, err := term.GetState(fd)
	if err != nil {
		return "", usageError("no RCON password, and no terminal to ask for one: %v", err)
	}
	fmt.Fprintf(tty, "RCON password for %s: ", server)

	type answer struct {
		pw  []byte
		err error
	}
	done := make(chan answer, 1)
	go func() {
		pw, err := term.ReadPassword(fd)
		done <- answer{pw, err}
	}()
	select {
	case a := <-done:
		fmt.Fprintln(tty)
		if a.err != nil {
			return "", fmt.Errorf("reading the password: %v", a.err)
		}
		pw := strings.TrimSuffix(string(a.pw), "\r")
		if pw == "" {
			return "", usageError("empty password")
		}
		return pw, nil
	case <-ctx.Done():
		// The reader goroutine stays blocked on the terminal until the
		// process exits; restore echo now.
		term.Restore(fd, state)
		fmt.Fprintln(tty)
		return "", ctx.Err()
	}
}
