package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/peterh/liner"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/rcon"
)

// This file is the interactive shell of `gsq rcon`: liner line editing and
// history kept across sessions. When the server drops the connection, the
// client dials again in the background; the shell tells of it between
// commands, and prints the server's events after each.

const (
	// maxHistoryFile bounds how much of the history file is read.
	maxHistoryFile = 8 << 20
	// maxHistoryLine is the longest line kept in the history (liner
	// cannot read longer ones back, and no dialect sends them).
	maxHistoryLine = 4000
)

const shellHelp = `Each line runs as one command on the server.
  :q, :quit or Ctrl-D   leave
  Ctrl-R                search the history (Enter runs, Ctrl-G cancels)
  Up, Down              walk the history
  Ctrl-A, Ctrl-E        start, end of line
  Tab                   complete a command name (common ones, and the history's)
  :help                 this text
A line that starts with a space is not kept in the history.
`

// rconShell is one interactive session.
type rconShell struct {
	env    *Env
	t      *rconTarget
	client console.Session
	out    *rconPrinter
}

// runRconShell runs the interactive shell on client.
func runRconShell(ctx context.Context, env *Env, t *rconTarget, client console.Session, out *rconPrinter) error {
	sh := &rconShell{env: env, t: t, client: client, out: out}
	l := liner.NewLiner()
	defer l.Close()
	l.SetCtrlCAborts(true)
	l.SetTabCompletionStyle(liner.TabPrints)
	l.SetCompleter(completer(t.shellCommands(), func() []string {
		var b strings.Builder
		l.WriteHistory(&b) // safe during Prompt, unlike the rest of liner's API
		return strings.Split(b.String(), "\n")
	}))
	hist := historyPath(env)
	loadHistory(l, hist)
	historyFailed := false

	fmt.Fprintf(env.Stderr, "gsq: connected to %s (%s); :q or Ctrl-D leaves, :help for keys\n", t.addr, t.protocolName())
	prompt := t.addr + "> "
	for {
		raw, err := l.Prompt(prompt)
		switch {
		case errors.Is(err, liner.ErrPromptAborted):
			fmt.Fprintln(env.Stderr, "gsq: hint: :q or Ctrl-D leaves the shell")
			continue
		case errors.Is(err, io.EOF):
			fmt.Fprintln(env.Stderr)
			return nil
		case err != nil:
			return err
		}
		line := strings.TrimSpace(raw)
		if line == "" {
			continue
		}
		quit := line == ":q" || line == ":quit"
		shellCommand := quit || line == ":help"
		if !shellCommand && !strings.HasPrefix(raw, " ") && !(t.password != "" && strings.Contains(line, t.password)) && len(line) <= maxHistoryLine {
			l.AppendHistory(line)
			if err := saveHistory(l, hist); err != nil && !historyFailed {
				historyFailed = true
				fmt.Fprintf(env.Stderr, "gsq: error: saving the history: %v\n", err)
			}
		}
		if quit {
			return nil
		}
		if line == ":help" {
			io.WriteString(env.Stderr, shellHelp)
			continue
		}
		if code := sh.exec(ctx, line); code != ExitOK && (code == ExitAuth || ctx.Err() != nil) {
			return silentExit(code)
		}
	}
}

// exec runs one line and prints its output, then what the server said
// unasked meanwhile (Squad chat, Rust console lines).
func (sh *rconShell) exec(ctx context.Context, line string) int {
	sh.out.flushNotes()
	r, err := sh.t.exec(ctx, sh.client, line)
	sh.out.flushNotes()
	sh.out.result(line, r, sh.t.decode, err)
	sh.events()
	if err == nil {
		return ExitOK
	}
	code := sh.out.fail(sh.t, line, err, false)
	var oe *rcon.OpError
	switch {
	case ctx.Err() != nil:
	case errors.As(err, &oe) && oe.Op != "exec":
		fmt.Fprintf(sh.env.Stderr, "gsq: %q was not sent: the connection to %s could not be re-established; the next command tries again\n", line, sh.t.addr)
	case connLost(err):
		fmt.Fprintf(sh.env.Stderr, "gsq: the connection to %s was lost while %q ran; it is not sent again (it may or may not have run)\n", sh.t.addr, line)
	}
	return code
}

// events prints the events waiting on the client.
func (sh *rconShell) events() {
	for {
		select {
		case e, ok := <-sh.client.Events():
			if !ok {
				return
			}
			sh.out.event(e)
		default:
			return
		}
	}
}

// historyPath is the shell history file: $XDG_STATE_HOME/gsq/rcon_history,
// else ~/.local/state/gsq/rcon_history; empty (no history kept) when
// neither variable is set.
func historyPath(env *Env) string {
	if dir := env.Getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "gsq", "rcon_history")
	}
	if home := env.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "state", "gsq", "rcon_history")
	}
	return ""
}

// loadHistory reads the history file, if there is one. A damaged file
// gives what could be read.
func loadHistory(l *liner.State, path string) {
	if path == "" {
		return
	}
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	l.ReadHistory(io.LimitReader(f, maxHistoryFile))
}

// saveHistory replaces the history file atomically; the file is private
// to the user (0600, in a 0700 directory), as commands may hold secrets.
// liner keeps at most liner.HistoryLimit entries, which bounds its size.
func saveHistory(l *liner.State, path string) error {
	if path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".rcon_history-*")
	if err != nil {
		return err
	}
	_, err = l.WriteHistory(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
