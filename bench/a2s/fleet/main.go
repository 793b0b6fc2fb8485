// Command fleet runs many simulated A2S servers in one process for the
// side-by-side benchmark (see ../side_by_side.sh). Every server plays the
// a2stest "modern" profile (challenge on every query, its own challenge
// secret and rate limiter, rules split in 3 fragments of 1248 bytes) on its
// own 127.0.0.1 port, answered by an a2s.Server through HandlePacket. By
// default (-lean, Linux) all sockets are served from one epoll set per
// core; -lean=false runs one a2stest.Server (a goroutine per socket)
// instead. It writes one address per line to the -out file, prints
// "ready", and serves until it is interrupted.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"net/netip"
	"os"
	"os/signal"
	"syscall"

	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/bench/a2s/internal/cpuprof"
)

func main() {
	n := flag.Int("n", 5000, "number of servers")
	out := flag.String("out", "targets.txt", "file to write the server addresses to")
	lean := flag.Bool("lean", true, "serve all sockets from epoll loops (Linux) instead of a2stest servers")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file (until interrupted)")
	flag.Parse()
	defer cpuprof.Start(*cpuProfile)()

	p, _ := a2stest.LookupProfile("modern")
	var addrs []netip.AddrPort
	if *lean {
		var err error
		if addrs, err = startLean(*n, p); err != nil {
			log.Fatal(err)
		}
	} else {
		for range *n {
			s := a2stest.NewServer(p)
			defer s.Close()
			addrs = append(addrs, s.Addr())
		}
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for _, a := range addrs {
		fmt.Fprintln(w, a)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("ready")

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
}
