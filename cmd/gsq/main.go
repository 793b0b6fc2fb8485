// Command gsq queries, watches and administers game servers over Valve's
// server queries (A2S), the Open Game Protocol and Source/Minecraft RCON.
//
// The commands live in package [github.com/gsq-project/gsq/cmd/gsq/cli];
// this file only wires signals and the process exit code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/gsq-project/gsq/cmd/gsq/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
