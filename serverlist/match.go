package serverlist

import (
	"strconv"
	"strings"
)

// Match reports whether s satisfies every condition of f. It is the one
// evaluator of the filter language in gsq: the master server and both
// fakes answer with it. What each key means (ValvePython/steam's table,
// and where Valve says nothing, the choice noted):
//
//   - appid N, napp N: s.AppID is N; is not N.
//   - gamedir, map: equal, ignoring ASCII case (a choice).
//   - dedicated 1, secure 1, linux 1, proxy 1, white 1: the server is so;
//     with 0 the condition holds for every server (a choice: Valve lists
//     only the 1 forms; negate with \nor\).
//   - password 0: no password; password 1: a password (a choice).
//   - empty 1: not empty (players above 0); full 1: not full (players
//     below the maximum); noplayers 1: empty. With 0 they hold for every
//     server.
//   - gametype a,b: every tag is among s's GameType tags; gamedata a,b
//     the same in GameData; gamedataor a,b: any of them. Tags compare
//     ignoring ASCII case (a choice).
//   - name_match, version_match: the name or version, where * stands for
//     any run of characters, ignoring ASCII case (a choice).
//   - gameaddr ip[:port]: the game address is ip (and port); addr
//     ip[:port]: the query address is.
//   - type d, l, p: dedicated, listen (not dedicated), proxy (the old
//     spelling qstat sends).
//   - collapse_addr_hash: holds for every server here; [Fleet.Select]
//     keeps one server per IP address.
//   - nor N: none of its conditions holds; nand N: not all of them do.
//   - any other key holds for every server: filters are advisory, and a
//     list that ignored a key would return the server too.
func (f Filter) Match(s *Server) bool {
	for i := range f.Terms {
		if !f.Terms[i].match(s) {
			return false
		}
	}
	return true
}

func (t *Term) match(s *Server) bool {
	switch t.Key {
	case KeyNor:
		for i := range t.Terms {
			if t.Terms[i].match(s) {
				return false
			}
		}
		return true
	case KeyNand:
		for i := range t.Terms {
			if !t.Terms[i].match(s) {
				return true
			}
		}
		return false
	case "appid", "napp":
		n, err := strconv.ParseUint(t.Value, 10, 32)
		if err != nil {
			return true // unreadable: ignored, as a list would
		}
		return (s.AppID == uint32(n)) == (t.Key == "appid")
	case "gamedir":
		return strings.EqualFold(s.GameDir, t.Value)
	case "map":
		return strings.EqualFold(s.Map, t.Value)
	case "dedicated":
		return t.Value != "1" || s.Dedicated
	case "secure":
		return t.Value != "1" || s.Secure
	case "linux":
		return t.Value != "1" || s.OS == "l"
	case "proxy":
		return t.Value != "1" || s.Proxy
	case "white":
		return t.Value != "1" || s.White
	case "password":
		switch t.Value {
		case "0":
			return !s.Password
		case "1":
			return s.Password
		}
		return true
	case "empty":
		return t.Value != "1" || s.Players > 0
	case "full":
		return t.Value != "1" || s.Players < s.MaxPlayers
	case "noplayers":
		return t.Value != "1" || s.Players == 0
	case "gametype":
		return hasTags(s.GameType, t.Value, true)
	case "gamedata":
		return hasTags(s.GameData, t.Value, true)
	case "gamedataor":
		return hasTags(s.GameData, t.Value, false)
	case "name_match":
		return Wildcard(t.Value, s.Name)
	case "version_match":
		return Wildcard(t.Value, s.Version)
	case "gameaddr", "addr":
		ip, port, ok := parseAddr(t.Value)
		if !ok {
			return true
		}
		a := s.Addr
		if t.Key == "gameaddr" {
			a = s.GameAddr()
		}
		return a.Addr().Unmap() == ip && (port == 0 || a.Port() == port)
	case "type":
		switch t.Value {
		case "d":
			return s.Dedicated
		case "l":
			return !s.Dedicated && !s.Proxy
		case "p":
			return s.Proxy
		}
	}
	return true
}

// hasTags reports whether the comma-separated list have holds every tag
// of want (all) or any of them (!all). An empty want holds.
func hasTags(have, want string, all bool) bool {
	wanted := splitTags(want)
	if len(wanted) == 0 {
		return true
	}
	tags := splitTags(have)
	for _, w := range wanted {
		found := false
		for _, h := range tags {
			if strings.EqualFold(h, w) {
				found = true
				break
			}
		}
		if found != all {
			return found // all: one missing fails; any: one found holds
		}
	}
	return all
}

// Wildcard reports whether s matches pattern, where * stands for any run
// of characters (none included) and every other byte for itself,
// ignoring ASCII case: the rule of `\name_match\` and `\version_match\`.
// It runs in time proportional to len(pattern)×len(s) at worst.
func Wildcard(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && lower(pattern[p]) == lower(s[i]):
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
