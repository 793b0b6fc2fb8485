// Command fleet runs many simulated A2S servers in one process for the
// side-by-side benchmark (see ../side_by_side.sh): each is an a2stest
// server with the modern profile (challenge on every query, rules split in
// 3 fragments of 1248 bytes) on its own 127.0.0.1 port. It prints one
// address per line to the -out file, then "ready" on stdout, and serves
// until it is interrupted.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/bench/a2s/internal/cpuprof"
)

func main() {
	n := flag.Int("n", 5000, "number of servers")
	out := flag.String("out", "targets.txt", "file to write the server addresses to")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file (until interrupted)")
	flag.Parse()
	defer cpuprof.Start(*cpuProfile)()

	p, _ := a2stest.ProfileByName("modern")
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	servers := make([]*a2stest.Server, 0, *n)
	for range *n {
		s := a2stest.NewServer(p)
		servers = append(servers, s)
		fmt.Fprintln(w, s.Addr())
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
	for _, s := range servers {
		s.Close()
	}
}
