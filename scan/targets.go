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

	"github.com/gsq-project/gsq/a2s"
)

// MaxLineLength bounds one line of a target list; longer lines are
// reported as bad targets, never buffered whole.
const MaxLineLength = 1024

// ErrBadTarget means a line of the target list is not HOST[:PORT].
var ErrBadTarget = errors.New("scan: bad target")

// Target is one server to query: read from a list by [TargetReader], or
// made by a program that holds addresses (set Addr, and Input to say
// where it came from). It comes back in its [Result] as given.
type Target struct {
	// Input is the target as the user wrote it: the list's line without
	// its comment, or whatever the caller puts there.
	Input string
	// Line is the 1-based line number in the list, or any number the
	// caller likes.
	Line int
	Host string // the host as written: an IP address or a name to resolve
	Port uint16
	// Addr is the address to query. A target read from a list has it when
	// Host is an IP literal; names are resolved lazily, when the target's
	// turn comes.
	Addr netip.AddrPort
	Err  error // the line could not be parsed (wraps ErrBadTarget)
	// Sections, when not zero, is what to ask this server over A2S instead
	// of what the Scanner's A2S protocol says.
	Sections a2s.Sections
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
			return Target{Line: tr.line, Host: string(line) + "...",
				Err: fmt.Errorf("%w: line %d longer than %d bytes", ErrBadTarget, tr.line, MaxLineLength)}, nil
		}
		if i := bytes.IndexByte(line, '#'); i == 0 || i > 0 && (line[i-1] == ' ' || line[i-1] == '\t') {
			line = line[:i]
		}
		if tr.line == 1 {
			line = bytes.TrimPrefix(line, []byte("\uFEFF")) // a byte-order mark
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

// ParseTarget parses one HOST[:PORT] of a target list. IPv6 addresses take
// brackets when they carry a port ("[::1]:27015"); a bare IPv6 address
// uses defaultPort.
func ParseTarget(line int, s string, defaultPort uint16) Target {
	t := Target{Input: s, Line: line, Host: s}
	bad := func(format string, args ...any) Target {
		t.Err = fmt.Errorf("%w: line %d: %s", ErrBadTarget, line, fmt.Sprintf(format, args...))
		return t
	}
	host, port := s, defaultPort
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		host = a.String()
	} else if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return bad("invalid port %q", p)
		}
		host, port = h, uint16(n)
	} else if strings.Contains(s, ":") {
		return bad("%q is not HOST[:PORT]", s)
	}
	if host == "" {
		return bad("empty host in %q", s)
	}
	if port == 0 {
		return bad("%q has no port", s)
	}
	t.Host, t.Port = host, port
	if a, err := netip.ParseAddr(host); err == nil {
		t.Addr = netip.AddrPortFrom(a.Unmap(), port)
		t.Host = t.Addr.Addr().String()
	} else if !validHostName(host) {
		return bad("%q is not a host name", host)
	}
	return t
}

// validHostName accepts letters, digits, '-', '_' and '.' (DNS names as
// resolvers take them), at most 253 bytes.
func validHostName(s string) bool {
	if len(s) > 253 {
		return false
	}
	for i := range len(s) {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}
