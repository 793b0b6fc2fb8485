package rcon

import (
	"errors"
	"unicode/utf8"
)

// Response split sizes used by [Server] and [Splitter] when none is
// configured.
const (
	// DefaultSourceSplitSize is the largest response body per packet on
	// [DialectSource], in bytes: the 4096-byte packet limit of Valve's
	// Source RCON Protocol page ("Packet Size") minus id, type and
	// padding.
	DefaultSourceSplitSize = 4096 - MinPacketSize
	// DefaultCS2SplitSize is the largest response body per packet on
	// [DialectCS2], in bytes. CS2 sends each answer as one packet, even
	// above 4096 bytes (users of several RCON clients have reported a
	// cvarlist of over 4200), so this is as much as a client with the
	// default [DefaultMaxPacketSize] accepts in one packet; output beyond
	// it is split rather than buffered without bound.
	DefaultCS2SplitSize = DefaultMaxPacketSize - MinPacketSize
)

// minSplitBytes and minSplitUnits keep every fragment able to hold one
// rune, so splitting always makes progress.
const (
	minSplitBytes = utf8.UTFMax
	minSplitUnits = 2
)

// errSplitterClosed is returned by writes after [Splitter.Close].
var errSplitterClosed = errors.New("rcon: write after end of response")

// A Splitter cuts a stream of command output into response bodies the
// way [Server] does, never inside a UTF-8 sequence, and hands each body
// to a callback as soon as it is complete. It holds at most about one
// fragment in memory however much is written.
//
// On [DialectSource] and [DialectCS2] the size counts bytes and a body
// never exceeds it. On [DialectMinecraft] it counts UTF-16 code units as
// vanilla Minecraft does (wiki.vg's RCON page gives 4096 as the largest
// response payload; the server cuts at 4096 Java chars): every body but
// the last holds at least that many units (one more when the cut would
// fall inside a surrogate pair, which vanilla would break and we keep
// whole), so clients that stop at the first short fragment see the whole
// answer. A body is only emitted once more output follows it, so output
// that is an exact multiple of the size ends in a full fragment and no
// empty one, as on the real servers; empty output gives one empty body.
type Splitter struct {
	emit   func(body []byte) error
	limit  int  // bytes or UTF-16 units per body
	units  bool // limit counts UTF-16 units
	maxBuf int  // bytes buffered at most
	buf    []byte
	sent   int
	err    error
	closed bool
	// On DialectMinecraft, how far into buf the units are counted, and
	// how many: a body's units are counted once, however it is written.
	scanned, counted int
}

// NewSplitter returns a Splitter for dialect d that passes each body to
// emit. size <= 0 selects the dialect's default
// ([DefaultSourceSplitSize], [DefaultCS2SplitSize] or
// [MinecraftFragmentUnits]); sizes too small to hold a rune are raised.
// The body passed to emit is only valid during the call. The first error
// from emit is returned by every later Write and by Close.
func NewSplitter(d Dialect, size int, emit func(body []byte) error) *Splitter {
	s := &Splitter{emit: emit, limit: size}
	switch d {
	case DialectMinecraft:
		if s.limit <= 0 {
			s.limit = MinecraftFragmentUnits
		}
		s.limit = max(s.limit, minSplitUnits)
		s.units = true
		// A fragment of limit units is at most 3 bytes per unit, plus
		// a 4-byte rune overshooting by one unit.
		s.maxBuf = 3*s.limit + 2*utf8.UTFMax
	default:
		if s.limit <= 0 {
			s.limit = DefaultSourceSplitSize
			if d == DialectCS2 {
				s.limit = DefaultCS2SplitSize
			}
		}
		s.limit = max(s.limit, minSplitBytes)
		s.maxBuf = s.limit + utf8.UTFMax
	}
	return s
}

// Write adds output. It emits every body that is complete and followed
// by more output.
func (s *Splitter) Write(p []byte) (int, error) { return splitterWrite(s, p) }

// WriteString is like Write for a string.
func (s *Splitter) WriteString(str string) (int, error) { return splitterWrite(s, str) }

func splitterWrite[T string | []byte](s *Splitter, p T) (int, error) {
	n := 0
	for len(p) > 0 {
		if err := s.writable(); err != nil {
			return n, err
		}
		take := min(len(p), s.maxBuf-len(s.buf))
		s.buf = append(s.buf, p[:take]...)
		p = p[take:]
		n += take
		if err := s.drain(); err != nil {
			return n, err
		}
	}
	return n, s.writable()
}

func (s *Splitter) writable() error {
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return errSplitterClosed
	}
	return nil
}

// drain emits full bodies that have output after them.
func (s *Splitter) drain() error {
	for {
		k, full := s.cut()
		if !full || k >= len(s.buf) {
			return nil
		}
		if err := s.send(s.buf[:k]); err != nil {
			return err
		}
		s.consume(k)
	}
}

// consume drops the first k bytes of buf, a body sent.
func (s *Splitter) consume(k int) {
	s.buf = s.buf[:copy(s.buf, s.buf[k:])]
	s.scanned, s.counted = 0, 0
}

// Close emits what is left, at least one body in all. It does not close
// anything else; calling it again does nothing.
func (s *Splitter) Close() error {
	if s.closed {
		return s.err
	}
	s.closed = true
	for s.err == nil && (len(s.buf) > 0 || s.sent == 0) {
		k, _ := s.cut()
		if s.send(s.buf[:k]) == nil {
			s.consume(k)
		}
	}
	return s.err
}

// reset prepares the Splitter for another response, keeping its buffer
// unless it grew large.
func (s *Splitter) reset() {
	if cap(s.buf) > maxKeptScratch {
		s.buf = nil
	}
	s.buf, s.sent, s.err, s.closed = s.buf[:0], 0, nil, false
	s.scanned, s.counted = 0, 0
}

// Bodies returns how many bodies have been emitted.
func (s *Splitter) Bodies() int { return s.sent }

func (s *Splitter) send(body []byte) error {
	s.sent++
	if err := s.emit(body); err != nil {
		s.err = err
	}
	return s.err
}

// cut returns the length of the first body in buf, and whether that body
// is full (it reached the limit, so the output goes on after it).
func (s *Splitter) cut() (int, bool) {
	if s.units {
		k, full, n := cutUnits(s.buf, s.limit, s.closed, s.scanned, s.counted)
		if !full {
			s.scanned, s.counted = k, n
		}
		return k, full
	}
	return cutBytes(s.buf, s.limit, s.closed)
}

// cutBytes returns the longest prefix of at most limit bytes that does
// not end inside a valid UTF-8 sequence, counting one whose bytes have
// not all arrived yet unless final. Invalid bytes are cut anywhere.
func cutBytes(b []byte, limit int, final bool) (int, bool) {
	if len(b) <= limit {
		return len(b), false
	}
	for i := limit; i > 0 && i > limit-utf8.UTFMax; i-- {
		if !utf8.RuneStart(b[i]) {
			continue
		}
		if i < limit {
			if !final && !utf8.FullRune(b[i:]) {
				return i, true
			}
			if r, size := utf8.DecodeRune(b[i:]); (r != utf8.RuneError || size > 1) && i+size > limit {
				return i, true
			}
		}
		break
	}
	return limit, true
}

// cutUnits returns the shortest prefix holding at least limit UTF-16
// units, counted as Java counts them (two for a supplementary rune, one
// for any other rune or invalid byte), and the units it counted. Unless
// final, a rune whose bytes have not all arrived yet ends the scan. The
// scan resumes at byte i with n units counted before it: a body written
// a byte at a time is scanned once, not once per byte.
func cutUnits(b []byte, limit int, final bool, i, n int) (k int, full bool, units int) {
	for i < len(b) {
		if !final && !utf8.FullRune(b[i:]) {
			return i, false, n
		}
		r, size := utf8.DecodeRune(b[i:])
		n++
		if r >= 0x10000 {
			n++
		}
		i += size
		if n >= limit {
			return i, true, n
		}
	}
	return len(b), false, n
}
