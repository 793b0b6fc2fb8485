package scan

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gsq-project/gsq/internal/hostport"
	"github.com/gsq-project/gsq/protocol"
)

// MaxLineLength bounds one line of a target list; longer lines are
// reported as bad targets, never buffered whole.
const MaxLineLength = 1024

// ErrBadTarget means a line of the target list is not HOST[:PORT].
var ErrBadTarget = errors.New("scan: bad target")

// ErrLineTooLong is why a line of a target list longer than MaxLineLength
// is not a target.
var ErrLineTooLong = fmt.Errorf("line longer than %d bytes", MaxLineLength)

// Target is one server to query: read from a list by [TargetReader], or
// made by a program that holds addresses (set Addr, and Input to say
// where it came from). It comes back in its [Outcome] as given.
type Target struct {
	// Input is the target as the user wrote it: the list's line without
	// its comment, or whatever the caller puts there.
	Input string
	// Line is the 1-based line number in the list; 0 for a target that
	// did not come from one.
	Line int
	// Tag is the caller's, handed back in the Outcome untouched: a
	// poller's id of the poll, say.
	Tag  uint64
	Host string // the host as written: an IP address or a name to resolve
	Port uint16
	// Addr is the address to query. A target read from a list has it when
	// Host is an IP literal; names are resolved lazily, when the target's
	// turn comes.
	Addr netip.AddrPort
	Err  error // the line could not be parsed (wraps ErrBadTarget)
	// Query, when not nil, is what to ask this server instead of the
	// Scanner's Query: another protocol, or other sections (see package
	// protocol).
	Query protocol.Query
}

// String is HOST:PORT, with brackets around an IPv6 host.
func (t Target) String() string {
	if t.Err != nil {
		return t.Host
	}
	return net.JoinHostPort(t.Host, strconv.Itoa(int(t.Port)))
}

// TargetReader reads a target list: one HOST[:PORT] per line, where HOST
// is an IPv4 address, an IPv6 address (in brackets when a port follows)
// or a host name. Blank lines and lines starting with '#' are skipped, as
// is anything after a '#' following whitespace. It keeps one line in
// memory at a time.
type TargetReader struct {
	r           *bufio.Reader
	defaultPort uint16
	line        int
}

// NewTargetReader returns a reader of the target list r. defaultPort
// fills in a missing port; 0 makes a missing port an error.
func NewTargetReader(r io.Reader, defaultPort uint16) *TargetReader {
	return &TargetReader{r: bufio.NewReaderSize(r, 16<<10), defaultPort: defaultPort}
}

// Next returns the next target. A line that cannot be parsed is returned
// as a Target with Err set, so the caller can report it and go on. At the
// end of the list Next returns io.EOF; other read errors are returned as
// they are.
func (tr *TargetReader) Next() (Target, error) {
	for {
		line, tooLong, err := tr.readLine()
		if err != nil {
			return Target{}, err
		}
		tr.line++
		if tooLong {
			input := string(line) + "..."
			return Target{Input: input, Line: tr.line, Host: input, Err: &TargetError{Line: tr.line, Err: ErrLineTooLong}}, nil
		}
		if tr.line == 1 {
			line = bytes.TrimPrefix(line, []byte("\uFEFF")) // a byte-order mark
		}
		if i := bytes.IndexByte(line, '#'); i == 0 || i > 0 && (line[i-1] == ' ' || line[i-1] == '\t') {
			line = line[:i]
		}
		s := strings.TrimSpace(string(line))
		if s == "" {
			continue
		}
		return ParseTarget(tr.line, s, tr.defaultPort), nil
	}
}

// readLine returns the next line without its end of line. A line longer
// than MaxLineLength is consumed to its end and reported with tooLong;
// only its start is returned.
func (tr *TargetReader) readLine() (line []byte, tooLong bool, err error) {
	line, err = tr.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		head := append([]byte(nil), line[:64]...)
		for err == bufio.ErrBufferFull {
			_, err = tr.r.ReadSlice('\n')
		}
		if err != nil && err != io.EOF {
			return nil, false, err
		}
		return head, true, nil
	}
	if err == io.EOF && len(line) > 0 {
		err = nil // a last line without '\n'
	}
	if err != nil {
		return nil, false, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) > MaxLineLength {
		return line[:64], true, nil
	}
	return line, false, nil
}

// ParseTarget parses one HOST[:PORT] of a target list, after trimming
// the spaces around it: HOST is an IPv4 address, an IPv6 address (in
// brackets when a port follows: "[::1]:27015"; a bare IPv6 address takes
// defaultPort) or a host name; PORT is 1 to 65535, defaultPort when
// missing (0: a missing port is an error). gsq's commands read addresses
// by the same rule. A target that does not read has Err set to a
// *TargetError.
func ParseTarget(line int, s string, defaultPort uint16) Target {
	s = strings.TrimSpace(s)
	t := Target{Input: s, Line: line, Host: s}
	hp, err := hostport.Parse(s, defaultPort)
	if err != nil {
		t.Err = &TargetError{Line: line, Err: err}
		return t
	}
	t.Host, t.Port, t.Addr = hp.Host, hp.Port, hp.Addr
	return t
}

// TargetError is why a line of a target list is not a target (Target.Err).
// It matches ErrBadTarget; its message is "scan: bad target: line N: "
// and what is wrong ("invalid port \"99999\": a port is a number from 1 to
// 65535", "line longer than 1024 bytes").
type TargetError struct {
	Line int
	Err  error // what is wrong, without a prefix
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("%v: line %d: %v", ErrBadTarget, e.Line, e.Err)
}

// Unwrap returns ErrBadTarget and what is wrong.
func (e *TargetError) Unwrap() []error { return []error{ErrBadTarget, e.Err} }
