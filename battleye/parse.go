package battleye

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Player is one row of the answer to "players".
type Player struct {
	Slot int // the player's number, as "kick" takes it
	// Addr is the player's address; the port is 0 when the row gives
	// none, and Addr is invalid when the row gives no address.
	Addr netip.AddrPort
	Ping int // -1 when the row gives no number
	// GUID is the BattlEye GUID (or, on Arma Reforger, the player's
	// UID); Verified reports BattlEye's "(OK)" after it, as opposed to
	// "(?)", not yet checked.
	GUID     string
	Verified bool
	Name     string
	// Lobby reports the " (Lobby)" BattlEye puts after the name of a
	// player still in the lobby; Name is without it.
	Lobby bool
}

// ParsePlayers reads the answer to "players": the table of DayZ and
// Arma ("[#] [IP Address]:[Port] [Ping] [GUID] [Name]", then
// "(N players in total)") or the list of Arma Reforger
// ("N ; UID ; Name"). Titles, rulers and the footer are skipped, whatever
// the names hold; a row that starts with a number and cannot be read is
// a [*ParseError] whose Offset is where the row starts.
func ParsePlayers(text string) ([]Player, error) {
	var out []Player
	for n, line := range lines(text) {
		if !startsWithDigit(line) {
			continue
		}
		if strings.Contains(line, " ; ") {
			f := strings.SplitN(line, " ; ", 3)
			slot, err := strconv.Atoi(strings.TrimSpace(f[0]))
			if err != nil || len(f) < 3 {
				return out, rowError(n, "player", line)
			}
			out = append(out, Player{Slot: slot, Ping: -1, GUID: strings.TrimSpace(f[1]), Name: strings.TrimSpace(f[2])})
			continue
		}
		f, rest := fields(line, 4)
		if len(f) < 4 {
			return out, rowError(n, "player", line)
		}
		slot, err := strconv.Atoi(f[0])
		if err != nil {
			return out, rowError(n, "player", line)
		}
		p := Player{Slot: slot, Ping: -1, Addr: parseAddr(f[1]), Name: rest}
		if ping, err := strconv.Atoi(f[2]); err == nil {
			p.Ping = ping
		}
		switch g := f[3]; {
		case strings.HasSuffix(g, "(OK)"):
			p.GUID, p.Verified = strings.TrimSuffix(g, "(OK)"), true
		case strings.HasSuffix(g, "(?)"):
			p.GUID = strings.TrimSuffix(g, "(?)")
		case g != "-":
			p.GUID = g
		}
		if name, ok := strings.CutSuffix(p.Name, " (Lobby)"); ok {
			p.Name, p.Lobby = name, true
		}
		out = append(out, p)
	}
	return out, nil
}

// Ban is one row of the answer to "bans".
type Ban struct {
	Index int // the ban's number, as "removeBan" takes it
	// GUID is set for a GUID ban, IP for an IP ban.
	GUID string
	IP   netip.Addr
	// MinutesLeft is the time left; -1 for a permanent ban ("perm").
	MinutesLeft int
	Reason      string
}

// ParseBans reads the answer to "bans": the "GUID Bans:" and "IP Bans:"
// tables, "[#] [GUID|IP Address] [Minutes left] [Reason]". Rows that
// start with a number and cannot be read are a [*ParseError].
func ParseBans(text string) ([]Ban, error) {
	var out []Ban
	for n, line := range lines(text) {
		if !startsWithDigit(line) {
			continue
		}
		f, rest := fields(line, 3)
		if len(f) < 3 {
			return out, rowError(n, "ban", line)
		}
		idx, err := strconv.Atoi(f[0])
		if err != nil {
			return out, rowError(n, "ban", line)
		}
		b := Ban{Index: idx, Reason: rest}
		if ip, err := netip.ParseAddr(f[1]); err == nil {
			b.IP = ip
		} else {
			b.GUID = f[1]
		}
		switch m := f[2]; m {
		case "perm", "-":
			b.MinutesLeft = -1
		default:
			if b.MinutesLeft, err = strconv.Atoi(m); err != nil {
				return out, rowError(n, "ban", line)
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// Admin is one row of the answer to "admins": an RCon client logged in.
type Admin struct {
	Index int
	Addr  netip.AddrPort
}

// ParseAdmins reads the answer to "admins": "[#] [IP Address]:[Port]".
func ParseAdmins(text string) ([]Admin, error) {
	var out []Admin
	for n, line := range lines(text) {
		if !startsWithDigit(line) {
			continue
		}
		f, _ := fields(line, 2)
		if len(f) < 2 {
			return out, rowError(n, "admin", line)
		}
		idx, err := strconv.Atoi(f[0])
		addr := parseAddr(f[1])
		if err != nil || !addr.IsValid() {
			return out, rowError(n, "admin", line)
		}
		out = append(out, Admin{Index: idx, Addr: addr})
	}
	return out, nil
}

// lines yields the lines of text with their byte offsets, without their
// line ends.
func lines(text string) func(yield func(int, string) bool) {
	return func(yield func(int, string) bool) {
		off := 0
		for line := range strings.SplitSeq(text, "\n") {
			if !yield(off, strings.TrimRight(line, "\r")) {
				return
			}
			off += len(line) + 1
		}
	}
}

func startsWithDigit(s string) bool {
	s = strings.TrimLeft(s, " \t")
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

// fields returns the first n space-separated fields of line and the rest
// of the line after them, inner spaces kept.
func fields(line string, n int) ([]string, string) {
	var f []string
	rest := line
	for len(f) < n {
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			break
		}
		end := strings.IndexAny(rest, " \t")
		if end < 0 {
			end = len(rest)
		}
		f, rest = append(f, rest[:end]), rest[end:]
	}
	return f, strings.TrimSpace(rest)
}

// parseAddr reads "ip:port" or "ip"; invalid when it is neither.
func parseAddr(s string) netip.AddrPort {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPortFrom(a, 0)
	}
	return netip.AddrPort{}
}

func rowError(off int, what, row string) error {
	if len(row) > 80 {
		row = row[:80] + "..."
	}
	return &ParseError{What: what + "s", Offset: off, Err: fmt.Errorf("unreadable row %q", row)}
}
