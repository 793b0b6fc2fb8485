package store

import (
	"strconv"
	"time"
)

// Seconds in the rollup buckets.
const (
	minute = 60
	hour   = 3600
	day    = 86400
)

// tables are the tables of the levels of history.
var tables = [...]string{"samples", "rollup_minute", "rollup_hour", "rollup_day"}

func (l Level) seconds() int64 { return int64(l.Bucket() / time.Second) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorTo(t, size int64) int64 { return floorDiv(t, size) * size }
func ceilTo(t, size int64) int64  { return -floorTo(-t, size) }

// ceilUnix is the first whole second at or after t: [from, to) in
// seconds covers the same samples as in time.
func ceilUnix(t time.Time) int64 {
	if t.Nanosecond() > 0 {
		return t.Unix() + 1
	}
	return t.Unix()
}

// marks are the store's watermarks, kept in its meta table.
type marks struct {
	// rolled[l]: the buckets of level l (minute and up) before it are
	// complete; 0 before the first rollup.
	rolled [4]int64
	// kept[l]: retention deleted the rows of level l before it; 0 while
	// nothing was deleted.
	kept [4]int64
}

var markKeys = [2][4]string{
	{"", "rolled_minute", "rolled_hour", "rolled_day"},
	{"kept_raw", "kept_minute", "kept_hour", "kept_day"},
}

func marksFrom(meta map[string]string) marks {
	var m marks
	for l := range 4 {
		if k := markKeys[0][l]; k != "" {
			m.rolled[l], _ = strconv.ParseInt(meta[k], 10, 64)
		}
		m.kept[l], _ = strconv.ParseInt(meta[markKeys[1][l]], 10, 64)
	}
	return m
}

// segment is a stretch of time one level of history answers for.
type segment struct {
	level    Level
	from, to int64
}

// segments splits [from, to) into the stretches the levels answer for,
// using the coarsest level up to top for the whole buckets it has rolled
// up and still keeps, and finer levels for the edges.
func (m marks) segments(from, to int64, top Level) []segment {
	if from >= to {
		return nil
	}
	if top == LevelRaw {
		return []segment{{LevelRaw, from, to}}
	}
	size := top.seconds()
	a := max(ceilTo(from, size), m.kept[top])
	b := min(floorTo(to, size), m.rolled[top])
	if a >= b {
		return m.segments(from, to, top-1)
	}
	segs := m.segments(from, a, top-1)
	segs = append(segs, segment{top, a, b})
	return append(segs, m.segments(b, to, top-1)...)
}

// historyLevel is the level History reads buckets of step from: the
// coarsest whose buckets divide step and that still keeps start, or,
// when none does, the one of them that keeps the most.
func (m marks) historyLevel(start, step int64) Level {
	best := LevelRaw
	for l := LevelDay; l > LevelRaw; l-- {
		if step%l.seconds() != 0 {
			continue
		}
		if m.kept[l] <= start {
			return l
		}
		if m.kept[l] < m.kept[best] {
			best = l
		}
	}
	return best
}
