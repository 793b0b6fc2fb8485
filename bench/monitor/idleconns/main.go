// Command idleconns opens idle keep-alive connections to gsq monitor from
// one loopback address, as the attacker of issue 19 (row 1) did: each sends
// one request, reads the answer, and holds the connection open. With
// -probe it instead times an API call every 200 ms on a new connection
// from another address. bench/monitor/idleconns.sh runs both against the
// real binary and reports the monitor's descriptors and memory.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "", "host:port")
	from := flag.String("from", "127.0.0.1", "local address")
	n := flag.Int("n", 10500, "connections")
	workers := flag.Int("workers", 64, "parallel openers")
	hold := flag.Duration("hold", 20*time.Second, "hold after opening")
	probe := flag.Duration("probe", 0, "probe mode: GET /api/v1/servers every 200ms from -from for this long")
	flag.Parse()
	if *probe > 0 {
		probeLoop(*addr, *from, *probe)
		return
	}
	var ok, refused, failed atomic.Int64
	conns := make([]net.Conn, *n)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(*from)}, Timeout: 10 * time.Second}
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= *n {
					return
				}
				c, err := d.Dial("tcp", *addr)
				if err != nil {
					failed.Add(1)
					continue
				}
				conns[i] = c
				c.SetDeadline(time.Now().Add(10 * time.Second))
				fmt.Fprintf(c, "GET /api/v1/servers HTTP/1.1\r\nHost: %s\r\n\r\n", *addr)
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil { // closed to make room before it was answered
					failed.Add(1)
					c.Close()
					conns[i] = nil
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					ok.Add(1)
				} else {
					refused.Add(1)
				}
				c.SetDeadline(time.Time{})
			}
		}()
	}
	wg.Wait()
	fmt.Printf("%s: %d connections opened in %v: %d answered 200, %d answered non-200, %d failed\n", *from, *n, time.Since(start).Round(time.Millisecond), ok.Load(), refused.Load(), failed.Load())
	time.Sleep(*hold)
	open := 0
	for _, c := range conns {
		if c == nil {
			continue
		}
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); errors.Is(err, os.ErrDeadlineExceeded) {
			open++
		}
	}
	fmt.Printf("%s: after holding %v, %d of them still open\n", *from, *hold, open)
}

func probeLoop(addr, from string, dur time.Duration) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	cl := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	var lat []time.Duration
	errs := 0
	end := time.Now().Add(dur)
	for time.Now().Before(end) {
		t0 := time.Now()
		resp, err := cl.Get("http://" + addr + "/api/v1/servers")
		if err != nil {
			errs++
		} else {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				errs++
			}
			lat = append(lat, time.Since(t0))
		}
		time.Sleep(200 * time.Millisecond)
	}
	slices.Sort(lat)
	if len(lat) == 0 {
		fmt.Printf("probe: no answers, %d errors\n", errs)
		return
	}
	fmt.Printf("probe from %s: %d calls, %d errors, latency median %v p99 %v max %v\n", from, len(lat), errs,
		lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)*99/100].Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
}
