// Command gsq queries, watches and administers game servers over Valve's
// server queries (A2S), the Open Game Protocol and Source/Minecraft RCON.
//
// The commands live in package [github.com/gsq-project/gsq/cmd/gsq/cli];
// this file only wires signals and the process exit code.
//
// The first SIGINT (Ctrl-C) or SIGTERM cancels the command's context: the
// command writes what it has done, and what was in flight as canceled,
// and gsq exits with 128 + the signal's number (130 for SIGINT, 143 for
// SIGTERM), as a shell reports a command a signal stopped. A second signal
// stops gsq at once.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/gsq-project/gsq/cmd/gsq/cli"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	got := make(chan syscall.Signal, 1)
	go func() {
		sig := <-signals
		signal.Reset() // a second signal stops gsq at once
		got <- sig.(syscall.Signal)
		cancel()
	}()
	code := cli.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	select {
	case sig := <-got:
		code = 128 + int(sig)
	default:
	}
	os.Exit(code)
}
