// Command fleet runs N fake Minecraft Java servers on 127.0.0.1, one TCP
// port each, answering Server List Ping as the vanilla server does (status
// once per connection, pong then close) with minecraft/mctest's vanilla
// status (3 of 20 players with their sample, a component MOTD, a
// favicon): one slp.Server serving N listeners. It writes the targets,
// one HOST:PORT a line, to -out, prints "ready" on stdout, and serves
// until killed. It is the server half of ../side_by_side.sh.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"net"
	"os"

	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/minecraft/slp"
)

func main() {
	n := flag.Int("n", 5000, "servers")
	out := flag.String("out", "targets.txt", "file to write the targets to")
	flag.Parse()
	h, err := slp.NewStaticHandler(mctest.DefaultStatus())
	if err != nil {
		log.Fatal(err)
	}
	// One client asks every server: no cap per source or in all.
	srv := &slp.Server{Handler: h, MaxConns: -1, MaxConnsPerSource: -1}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for range *n {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			log.Fatalf("listen: %v (raise ulimit -n?)", err)
		}
		fmt.Fprintln(w, l.Addr())
		go srv.Serve(l)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	f.Close()
	fmt.Println("ready")
	select {}
}
