// Package cli implements the gsq command line: one file per command, flag
// parsing, configuration and output (tables, and the JSON of package
// result, documented in docs/json.md). It holds no protocol logic; that
// lives in the a2s, ogp and rcon packages.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// Exit codes shared by every command (README, "Exit codes").
const (
	ExitOK          = 0   // success
	ExitFailure     = 1   // protocol error, or a server that answered badly
	ExitUsage       = 2   // bad flags or arguments
	ExitTimeout     = 3   // timeout or unreachable
	ExitAuth        = 4   // authentication failed
	ExitInterrupted = 130 // interrupted (SIGINT): 128 + the signal number, as shells report it
)

// Env is what a command may touch of the outside world. Tests build one
// with buffers and a fake environment; Run builds the real one.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads an environment variable.
	Getenv func(string) string
	// IsTerminal reports whether the stream is an interactive terminal.
	IsTerminal func(any) bool
}

// exitError carries an exit code up to Run. Its message is printed once,
// as "gsq: error: ...", unless it is empty (the command already reported).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// withCode wraps err so that Run exits with code.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// exitCodeOf is the exit code err carries, or ExitFailure.
func exitCodeOf(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitFailure
}

// usageError is a bad flag or argument: exit code 2.
func usageError(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// silentExit ends the command with code without printing anything more:
// the command has already written its diagnostics.
func silentExit(code int) error {
	if code == ExitOK {
		return nil
	}
	return &exitError{code: code}
}

// Run executes gsq with the given arguments and returns the process exit
// code. It never calls os.Exit, so tests can drive it directly.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &Env{
		Stdin:  stdin,
		Stdout: stdout,
		Stderr: stderr,
		Getenv: os.Getenv,
		IsTerminal: func(s any) bool {
			f, ok := s.(*os.File)
			return ok && term.IsTerminal(int(f.Fd()))
		},
	}
	return env.Run(ctx, args)
}

// Run executes gsq in this environment and returns the exit code.
func (env *Env) Run(ctx context.Context, args []string) int {
	root := newRootCmd(env)
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := ExitFailure
	var ee *exitError
	switch {
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.As(err, &ee) && ee.code == ExitInterrupted):
		// Interrupted: what was done is written; "context canceled" says
		// nothing the user does not know.
		return ExitInterrupted
	case errors.As(err, &ee):
		code = ee.code
	case isCobraUsageError(err):
		code = ExitUsage
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(env.Stderr, "gsq: error: %s\n", msg)
		if code == ExitUsage {
			fmt.Fprintf(env.Stderr, "gsq: hint: run 'gsq %s--help' for usage\n", subcommandOf(root, args))
		}
	}
	return code
}

// isCobraUsageError recognises the argument errors cobra itself returns
// (unknown command, wrong number of arguments), which have no type.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, s := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// flagError rewrites a bad flag value's error in words: pflag's own
// message quotes Go's parsers ("strconv.ParseInt: parsing \"abc\": invalid
// syntax", "time: invalid duration").
func flagError(err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return err
	}
	name, value := "--"+iv.GetFlag().Name, iv.GetValue()
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("%s: %s is out of range", name, value)
	}
	switch typ := iv.GetFlag().Value.Type(); {
	case typ == "duration": // package internal/duration's error says it in words
		return fmt.Errorf("%s: %v", name, errors.Unwrap(err))
	case strings.HasPrefix(typ, "int"), strings.HasPrefix(typ, "uint"), typ == "count":
		return fmt.Errorf("%s: %q is not a whole number", name, value)
	case strings.HasPrefix(typ, "float"):
		return fmt.Errorf("%s: %q is not a number", name, value)
	case typ == "bool":
		return fmt.Errorf("%s: %q is neither true nor false", name, value)
	}
	return fmt.Errorf("%s: invalid value %q: %v", name, value, errors.Unwrap(err))
}

// subcommandOf names the subcommand args select, for the usage hint.
func subcommandOf(root *cobra.Command, args []string) string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == root {
		return ""
	}
	// A nested command's whole path: "monitor targets add ", not "add ".
	return strings.TrimPrefix(cmd.CommandPath(), root.Name()+" ") + " "
}

func newRootCmd(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "gsq",
		Short: "Query, watch and administer game servers (A2S, OGP, Minecraft, RCON and the other consoles)",
		Long: `gsq queries, watches and administers game servers, and finds them.

It speaks Valve's server queries (A2S), the Open Game Protocol (OGP v0.91),
Minecraft's Server List Ping, Query and Bedrock ping, Satisfactory's and
FiveM's queries, Source and Minecraft RCON, Rust's WebRCON, BattlEye RCon,
Palworld's REST API and the 7 Days to Die telnet console, as a client and
as a simulated server; it lists servers from the Steam Web API and master
servers ("gsq discover"), and knows which game speaks what ("gsq games").

Exit codes: 0 ok, 1 failure, 2 usage error, 3 timeout or unreachable,
4 authentication failed, 130 interrupted (Ctrl-C).`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: ExitUsage, err: flagError(err)}
	})
	for _, add := range commands {
		root.AddCommand(add(env))
	}
	return root
}

// commands lists the constructors of gsq's subcommands; each command's file
// registers itself in an init function so files stay independent.
var commands []func(*Env) *cobra.Command

func register(newCmd func(*Env) *cobra.Command) { commands = append(commands, newCmd) }

// version reports the module version gsq was built from.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
