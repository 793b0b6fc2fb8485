//go:build unix

// Command query asks every server of a target list for A2S_INFO,
// A2S_PLAYER and A2S_RULES, with the gsq client (-impl gsq: three calls,
// one after the other, as a program that wants one section at a time
// makes them; -impl gsq-query: one Client.Query conversation, which asks
// the three at once once the challenge is known) or rumblefrog/go-a2s
// v1.0.2, from the same number of goroutines, and prints one result line:
// targets/s, CPU seconds (user+sys of this process, from getrusage) and
// how many targets answered all three queries. It is the client half of
// ../side_by_side.sh.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	goa2s "github.com/rumblefrog/go-a2s"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/bench/a2s/internal/cpuprof"
)

func main() {
	impl := flag.String("impl", "gsq", "client: gsq, gsq-query or go-a2s")
	targetsFile := flag.String("targets", "targets.txt", "file with one HOST:PORT per line")
	workers := flag.Int("c", 256, "concurrent goroutines")
	timeout := flag.Duration("timeout", 2*time.Second, "per-attempt timeout")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	defer cpuprof.Start(*cpuProfile)()

	targets, err := readTargets(*targetsFile)
	if err != nil {
		log.Fatal(err)
	}
	var query func(netip.AddrPort) error
	switch *impl {
	case "gsq":
		c := &a2s.Client{Timeout: *timeout}
		defer c.Close()
		query = func(addr netip.AddrPort) error { return queryGSQ(c, addr) }
	case "gsq-query":
		c := &a2s.Client{Timeout: *timeout}
		defer c.Close()
		query = func(addr netip.AddrPort) error { return queryGSQAll(c, addr) }
	case "go-a2s":
		query = func(addr netip.AddrPort) error { return queryGoA2S(addr, *timeout) }
	default:
		log.Fatalf("unknown -impl %q", *impl)
	}

	// Workers take the next target with an atomic counter rather than from
	// a channel, so that handing out work costs no goroutine switch.
	var next, answered, failed atomic.Int64
	firstErr := make(chan error, 1)
	var wg sync.WaitGroup
	cpu0 := cpuSeconds()
	start := time.Now()
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(targets) {
					return
				}
				addr := targets[i]
				if err := query(addr); err != nil {
					failed.Add(1)
					select {
					case firstErr <- fmt.Errorf("%v: %w", addr, err):
					default:
					}
					continue
				}
				answered.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuSeconds() - cpu0
	n := float64(len(targets))
	fmt.Printf("%-7s targets=%d answered=%d failed=%d wall=%.3fs targets/s=%.0f cpu=%.3fs cpu/target=%.1fus\n",
		*impl, len(targets), answered.Load(), failed.Load(), elapsed.Seconds(), n/elapsed.Seconds(),
		cpu, cpu/n*1e6)
	select {
	case err := <-firstErr:
		fmt.Printf("%-7s first error: %v\n", *impl, err)
	default:
	}
}

func queryGSQ(c *a2s.Client, addr netip.AddrPort) error {
	ctx := context.Background()
	if _, err := c.Info(ctx, addr); err != nil {
		return err
	}
	if _, err := c.Players(ctx, addr); err != nil {
		return err
	}
	rules, err := c.Rules(ctx, addr)
	if err != nil {
		return err
	}
	if len(rules.List) == 0 {
		return fmt.Errorf("no rules")
	}
	return nil
}

func queryGSQAll(c *a2s.Client, addr netip.AddrPort) error {
	res, err := c.Query(context.Background(), addr, a2s.AllSections)
	if err != nil {
		return err
	}
	if len(res.Rules.List) == 0 {
		return fmt.Errorf("no rules")
	}
	return nil
}

func queryGoA2S(addr netip.AddrPort, timeout time.Duration) error {
	c, err := goa2s.NewClient(addr.String(), goa2s.TimeoutOption(timeout))
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.QueryInfo(); err != nil {
		return err
	}
	if _, err := c.QueryPlayer(); err != nil {
		return err
	}
	rules, err := c.QueryRules()
	if err != nil {
		return err
	}
	if len(rules.Rules) == 0 {
		return fmt.Errorf("no rules")
	}
	return nil
}

func readTargets(name string) ([]netip.AddrPort, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var targets []netip.AddrPort
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		a, err := netip.ParseAddrPort(sc.Text())
		if err != nil {
			return nil, err
		}
		targets = append(targets, a)
	}
	return targets, sc.Err()
}

// cpuSeconds is the user+sys CPU time of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
