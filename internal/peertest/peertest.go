// Package peertest runs, for the interop tests, the programs nobody here
// wrote that gsq is checked against, since an implementation tested only
// against its own fakes can agree with itself and still be wrong: qstat from
// the system, and the npm peers that .ci/install-peers puts in .peers/.
package peertest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// timeout bounds one run of a peer.
const timeout = 30 * time.Second

// Run runs a peer program and returns its stdout. A failure, or a run
// longer than 30 s, ends the test with the program's stderr.
func Run(t testing.TB, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return output(t, exec.CommandContext(ctx, bin, args...), bin)
}

// output runs cmd and returns its stdout; a failure ends the test with
// what names it and its stderr.
func output(t testing.TB, cmd *exec.Cmd, what string) []byte {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s: %v\n%s", what, err, ee.Stderr)
		}
		t.Fatalf("%s: %v", what, err)
	}
	return out
}

// Module is the folder of the npm package name in .peers/node_modules,
// found from the working directory up to the module root. It ends the
// test when the package is not installed.
func Module(t testing.TB, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("peertest: no go.mod above the working directory")
		}
		dir = parent
	}
	module := filepath.Join(dir, ".peers", "node_modules", name)
	if _, err := os.Stat(filepath.Join(module, "package.json")); err != nil {
		t.Fatalf("npm %s is not installed in .peers (run .ci/install-peers): %v", name, err)
	}
	return module
}

// gamedigScript has gamedig (argv[1]) query argv[2] with the protocol
// argv[3], rules included, and prints the state as JSON.
const gamedigScript = `
const { GameDig } = await import(process.argv[1] + '/lib/index.js');
const [host, port] = process.argv[2].split(':');
try {
  const state = await GameDig.query({type: process.argv[3], host, port: Number(port),
    requestRules: true, maxRetries: 1, socketTimeout: 3000, attemptTimeout: 10000});
  console.log(JSON.stringify(state));
} catch (e) {
  console.error('gamedig: ' + e.message);
  process.exit(1);
}
`

// Gamedig has gamedig query addr (HOST:PORT) with one of its protocols,
// such as "protocol-valve" or "protocol-dayz", and returns the state it
// prints, as JSON.
func Gamedig(t testing.TB, protocol, addr string) []byte {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	return Run(t, node, "--input-type=module", "-e", gamedigScript, Module(t, "gamedig"), addr, protocol)
}
