// Command ceiling is the lean reference A2S client of the scan benchmarks:
// the most targets per second this box can query, measured against the
// same fleet as gsq scan (see ../scan/scan.sh) or the a2s client bench.
//
// It asks every target for INFO, PLAYER and RULES (as the Valve
// Developer Community wiki page "Server queries" describes them) with as
// little work per datagram as a client can do: UDP sockets (one by
// default) with one goroutine each making blocking recvmmsg/sendmmsg
// calls, a per-target state machine that asks for the challenge with the
// INFO request and then sends INFO, PLAYER and RULES at once with it, and
// parsing limited to the type byte and a split fragment's number. Target state is allocated once, up front. Lost
// requests are resent after -timeout, at most -retries times, found by a
// coarse deadline scan.
//
// Usage: ceiling -f targets-file [-c 1024] [-sockets 1] [-timeout 300ms] [-retries 3]
//
// On the 2-core benchmark box, with the fleet sharing the cores, one socket
// beat two and four (bench/scan/scan.sh A: about 24k against 17-20k
// targets/s), and 512 to 2048 targets in flight did equally well.
//
// The file holds one IP:PORT per line. It prints one line:
//
//	targets/s=N answered=N cpu_us_per_target=N
//
// where answered counts the targets whose three sections all came back and
// cpu_us_per_target is this process's user+system CPU time per target.
// Linux only (amd64, arm64).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"net/netip"
	"os"
	"strings"
	"time"
)

// config is the command line.
type config struct {
	concurrency int           // targets in flight, across all sockets
	sockets     int           // UDP sockets, one goroutine each
	timeout     time.Duration // wait for an answer before resending
	retries     int           // resends of an unanswered request
}

func main() {
	file := flag.String("f", "", "targets file: one IP:PORT per line")
	var cfg config
	flag.IntVar(&cfg.concurrency, "c", 1024, "targets in flight, across all sockets")
	flag.IntVar(&cfg.sockets, "sockets", 1, "UDP sockets (one goroutine each)")
	flag.DurationVar(&cfg.timeout, "timeout", 300*time.Millisecond, "wait for an answer before resending")
	flag.IntVar(&cfg.retries, "retries", 3, "resends of an unanswered request")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("ceiling: ")
	if *file == "" || cfg.sockets < 1 || cfg.concurrency < cfg.sockets || cfg.retries < 0 || cfg.timeout <= 0 {
		flag.Usage()
		os.Exit(2)
	}
	targets, err := load(*file)
	if err != nil {
		log.Fatal(err)
	}
	if len(targets) == 0 {
		log.Fatal("no targets")
	}
	cpu0 := cpuTime()
	t0 := time.Now()
	answered, err := scan(targets, cfg)
	if err != nil {
		log.Fatal(err)
	}
	wall := time.Since(t0)
	cpu := cpuTime() - cpu0
	fmt.Printf("targets/s=%.0f answered=%d cpu_us_per_target=%.2f\n",
		float64(len(targets))/wall.Seconds(), answered, float64(cpu.Microseconds())/float64(len(targets)))
}

// load reads the targets file.
func load(name string) ([]netip.AddrPort, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []netip.AddrPort
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		a, err := netip.ParseAddrPort(s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		out = append(out, netip.AddrPortFrom(a.Addr().Unmap(), a.Port()))
	}
	return out, sc.Err()
}
