package sdtd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/textenc"
)

// The server's words (from the decompiled server: TelnetConnection).
const (
	PasswordPrompt   = "Please enter password:"
	LogonSuccessful  = "Logon successful."
	PasswordWrong    = "Password incorrect, please enter password:"
	TooManyFailures  = "Too many failed login attempts!"
	unknownCommand   = "*** ERROR: unknown command '"
	executingCommand = "Executing command '"
)

// LineReader reads the console's lines: ended by "\r\n" or "\n", with the
// NUL bytes the server sends for every log line before the login dropped,
// and lines longer than the limit cut there (the rest of such a line is
// read and thrown away, and Cut says so).
type LineReader struct {
	br  *bufio.Reader
	max int
	// Cut counts the lines that were longer than the limit.
	Cut int
}

// NewLineReader reads r's lines of at most max bytes each.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, 4096), max: max}
}

// ReadLine returns the next line without its line end. A partial line at
// the end of the input is returned with io.EOF after it.
func (r *LineReader) ReadLine() (string, error) {
	var line []byte
	over := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		if room := r.max + 2 - len(line); len(chunk) > room { // 2: the line end
			line = append(line, chunk[:max(room, 0)]...)
			over = true
		} else {
			line = append(line, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && (!errors.Is(err, io.EOF) || len(line) == 0):
			return "", err
		}
		line = bytes.TrimRight(line, "\r\n")
		if over || len(line) > r.max {
			line = line[:min(len(line), r.max)]
			r.Cut++
		}
		return clean(line), nil
	}
}

// clean drops every NUL: before the login each log line reaches a
// client as one 0x00 byte.
func clean(b []byte) string {
	if bytes.IndexByte(b, 0) >= 0 {
		b = bytes.ReplaceAll(b, []byte{0}, nil)
	}
	return textenc.Decode(b)
}

// logLine matches the server's log lines: "<ISO time> <uptime> INF|WRN|ERR|EXC <text>".
var logLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d) (\d+\.\d+) (INF|WRN|ERR|EXC) (.*)$`)

// IsLogLine reports whether line is a log line of the server rather than
// part of a command's answer.
func IsLogLine(line string) bool { return logLine.MatchString(line) }

// echoOf returns the command and the address of an "Executing command"
// log line, which the server writes to every telnet client before it runs
// a command.
func echoOf(text string) (cmd, from string, ok bool) {
	rest, ok := strings.CutPrefix(text, executingCommand)
	if !ok {
		return "", "", false
	}
	i := strings.LastIndex(rest, "' by ")
	if i < 0 {
		return "", "", false
	}
	cmd, rest = rest[:i], rest[i+len("' by "):]
	_, from, ok = strings.Cut(rest, " from ")
	return cmd, from, ok
}

// Event turns a log line into an event: chat, players joining, leaving
// and dying, commands run by others, and the rest as log lines.
func Event(line string) console.Event {
	e := console.Event{Time: time.Now(), Kind: console.KindLog, Text: line, Raw: []byte(line)}
	m := logLine.FindStringSubmatch(line)
	if m == nil {
		return e
	}
	text := m[4]
	e.Text = text
	switch {
	case strings.HasPrefix(text, "Chat (from '"):
		// Chat (from 'Steam_765...', entity id '171', to 'Global'): 'Ann': hello
		e.Kind = console.KindChat
		rest := text[len("Chat (from '"):]
		id, rest, _ := strings.Cut(rest, "'")
		e.PlayerID = id
		if _, to, ok := strings.Cut(rest, "to '"); ok {
			ch, rest, _ := strings.Cut(to, "'")
			e.Channel = strings.ToLower(ch)
			if _, said, ok := strings.Cut(rest, "): '"); ok {
				name, msg, _ := strings.Cut(said, "': ")
				e.Player, e.Text = name, msg
			}
		}
	case strings.HasPrefix(text, "Player connected, "):
		e.Kind = console.KindJoin
		e.Player, e.PlayerID = field(text, "name="), field(text, "pltfmid=")
	case strings.HasPrefix(text, "Player disconnected: "):
		e.Kind = console.KindLeave
		e.Player, e.PlayerID = strings.Trim(field(text, "PlayerName="), "'"), strings.Trim(field(text, "PltfmId="), "'")
	case strings.HasPrefix(text, "GMSG: Player '") && (strings.HasSuffix(text, "' died") || strings.Contains(text, "' killed by '")):
		e.Kind = console.KindKill
		e.Player, _, _ = strings.Cut(text[len("GMSG: Player '"):], "'")
	case strings.HasPrefix(text, executingCommand):
		e.Kind = console.KindAdmin
	}
	return e
}

// field returns the value after key in "k1=v1, k2=v2" text.
func field(text, key string) string {
	_, v, ok := strings.Cut(text, key)
	if !ok {
		return ""
	}
	v, _, _ = strings.Cut(v, ", ")
	return v
}

// Player is one row of the answer to "listplayers".
type Player struct {
	EntityID   int
	Name       string
	Position   string // "(x, y, z)"
	Health     int
	Deaths     int
	Zombies    int
	Players    int // players killed
	Score      int
	Level      int
	PlatformID string // "Steam_7656..."
	CrossID    string // "EOS_..."
	IP         string
	Ping       int
}

// ParsePlayers reads the answer to "listplayers" (or "lp"):
// "1. id=171, Ann, pos=(...), rot=(...), remote=True, health=100, ...",
// ended by "Total of N in the game". A name may hold commas; it is what
// stands between "id=N, " and ", pos=(". A row that cannot be read is a
// [*ParseError].
func ParsePlayers(text string) ([]Player, error) {
	var out []Player
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimRight(line, "\r")
		_, rest, ok := strings.Cut(line, ". id=")
		if !ok || line == "" || line[0] < '0' || line[0] > '9' {
			continue
		}
		var p Player
		id, rest, ok := strings.Cut(rest, ", ")
		name, rest, ok2 := strings.Cut(rest, ", pos=(")
		var err error
		if p.EntityID, err = strconv.Atoi(id); !ok || !ok2 || err != nil {
			return out, &ParseError{What: "listplayers", Err: fmt.Errorf("unreadable row %q", line)}
		}
		p.Name = name
		pos, rest, _ := strings.Cut(rest, ")")
		p.Position = "(" + pos + ")"
		for _, kv := range []struct {
			key string
			n   *int
			s   *string
		}{
			{"health=", &p.Health, nil}, {"deaths=", &p.Deaths, nil}, {"zombies=", &p.Zombies, nil},
			{"players=", &p.Players, nil}, {"score=", &p.Score, nil}, {"level=", &p.Level, nil},
			{"pltfmid=", nil, &p.PlatformID}, {"crossid=", nil, &p.CrossID}, {"ip=", nil, &p.IP}, {"ping=", &p.Ping, nil},
		} {
			v := field(rest, ", "+kv.key)
			if kv.s != nil {
				*kv.s = v
			} else if n, err := strconv.Atoi(v); err == nil {
				*kv.n = n
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// ParseError is an answer that is not what it should be.
type ParseError struct {
	What string
	Err  error
}

func (e *ParseError) Error() string { return "sdtd: parse " + e.What + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// Is reports whether b, the first bytes a TCP server sent, come from a
// 7 Days to Die telnet console: its password prompt or its banner (no
// password), after any NUL bytes (log lines before a login). A
// client of another protocol (Source RCON) that reads such bytes can tell
// its user to use the telnet console.
func Is(b []byte) bool {
	b = bytes.TrimLeft(b, "\x00")
	return bytes.HasPrefix(b, []byte(PasswordPrompt)) || bytes.HasPrefix(b, []byte(bannerStart))
}

// bannerStart begins the banner, the first line of a console without a
// password.
const bannerStart = "*** Connected with 7DTD server"
