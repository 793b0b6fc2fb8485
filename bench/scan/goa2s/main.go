// Command goa2s is the go-a2s v1.0.2 (github.com/rumblefrog/go-a2s)
// contestant of bench/scan/scan.sh: it queries info, players and rules of
// every HOST:PORT of a list with a pool of goroutines, one go-a2s client
// (one connected UDP socket) per query, prints one JSON line per server
// on stdout and "answered N of M" on stderr.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	goa2s "github.com/rumblefrog/go-a2s"
)

type line struct {
	Address string            `json:"address"`
	Info    *goa2s.ServerInfo `json:"info,omitempty"`
	Players *goa2s.PlayerInfo `json:"players,omitempty"`
	Rules   *goa2s.RulesInfo  `json:"rules,omitempty"`
	Error   string            `json:"error,omitempty"`
}

func query(addr string, timeout time.Duration) line {
	l := line{Address: addr}
	c, err := goa2s.NewClient(addr, goa2s.TimeoutOption(timeout))
	if err != nil {
		l.Error = err.Error()
		return l
	}
	defer c.Close()
	if l.Info, err = c.QueryInfo(); err == nil {
		if l.Players, err = c.QueryPlayer(); err == nil {
			l.Rules, err = c.QueryRules()
		}
	}
	if err != nil {
		l.Error = err.Error()
	}
	return l
}

func main() {
	file := flag.String("f", "", "target list, one HOST:PORT per line")
	workers := flag.Int("c", 500, "concurrent queries")
	timeout := flag.Duration("timeout", time.Second, "go-a2s timeout per request")
	flag.Parse()
	in, err := os.Open(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	targets := make(chan string, *workers)
	results := make(chan line, *workers)
	var wg sync.WaitGroup
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range targets {
				results <- query(t, *timeout)
			}
		}()
	}
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			if t := strings.TrimSpace(sc.Text()); t != "" && t[0] != '#' {
				targets <- t
			}
		}
		close(targets)
		wg.Wait()
		close(results)
	}()
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	enc := json.NewEncoder(out)
	total, answered := 0, 0
	for l := range results {
		total++
		if l.Error == "" {
			answered++
		}
		_ = enc.Encode(l)
	}
	out.Flush()
	fmt.Fprintf(os.Stderr, "answered %d of %d\n", answered, total)
}
