package cli

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress is the line `gsq scan` keeps up to date on stderr when stderr
// is a terminal: a bar when the number of servers is known, the count and
// the rate. It is redrawn at most every 100 ms, and erased at the end.
type progress struct {
	w     io.Writer
	total int64 // -1 when unknown
	done  int64
	start time.Time
	drawn time.Time
}

func newProgress(w io.Writer, total int64) *progress {
	return &progress{w: w, total: total, start: time.Now()}
}

// add counts n more servers done.
func (p *progress) add(n int64) {
	p.done += n
	if now := time.Now(); now.Sub(p.drawn) >= 100*time.Millisecond {
		p.drawn = now
		p.draw(now)
	}
}

func (p *progress) draw(now time.Time) {
	rate := 0.0
	if d := now.Sub(p.start).Seconds(); d > 0 {
		rate = float64(p.done) / d
	}
	if p.total < 0 {
		fmt.Fprintf(p.w, "\r\x1b[Kscanning: %d done, %.0f/s", p.done, rate)
		return
	}
	const width = 30
	filled := 0
	if p.total > 0 {
		filled = int(min(p.done, p.total) * width / p.total)
	}
	fmt.Fprintf(p.w, "\r\x1b[Kscanning [%s%s] %d/%d, %.0f/s", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), p.done, p.total, rate)
}

// finish erases the line.
func (p *progress) finish() { fmt.Fprint(p.w, "\r\x1b[K") }
