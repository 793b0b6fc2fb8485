package sdtd

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestLineReader(t *testing.T) {
	t.Parallel()
	in := "\x00\x00Please enter password:\r\nLogon successful.\r\n\r\nplain\nvery" + strings.Repeat("x", 100) + "\r\ntail"
	lr := NewLineReader(iotest.OneByteReader(strings.NewReader(in)), 24)
	var got []string
	for {
		line, err := lr.ReadLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, line)
	}
	want := []string{"Please enter password:", "Logon successful.", "", "plain", "very" + strings.Repeat("x", 20), "tail"}
	if strings.Join(got, "|") != strings.Join(want, "|") || lr.Cut != 1 {
		t.Errorf("lines %q (cut %d), want %q", got, lr.Cut, want)
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ line, kind, text, player, id, ch string }{
		{"2024-05-01T12:00:00 123.456 INF Chat (from 'Steam_76561198000000001', entity id '171', to 'Global'): 'Ann': hi all", "chat", "hi all", "Ann", "Steam_76561198000000001", "global"},
		{"2024-05-01T12:00:01 124.000 INF Player connected, entityid=171, name=Ann, pltfmid=Steam_76561198000000001, crossid=EOS_x, steamOwner=Steam_1, ip=203.0.113.5", "join", "", "Ann", "Steam_76561198000000001", ""},
		{"2024-05-01T12:00:02 125.000 INF Player disconnected: EntityID=171, PltfmId='Steam_76561198000000001', CrossId='EOS_x', OwnerID='Steam_1', PlayerName='Ann'", "leave", "", "Ann", "Steam_76561198000000001", ""},
		{"2024-05-01T12:00:03 126.000 INF GMSG: Player 'Ann' died", "kill", "", "Ann", "", ""},
		{"2024-05-01T12:00:04 127.000 INF Executing command 'lp' by Telnet from 127.0.0.1:40000", "admin", "", "", "", ""},
		{"2024-05-01T12:00:05 128.000 WRN something odd", "log", "something odd", "", "", ""},
		{"not a log line", "log", "not a log line", "", "", ""},
	} {
		e := Event(tc.line)
		if string(e.Kind) != tc.kind || e.Player != tc.player || e.PlayerID != tc.id || e.Channel != tc.ch || (tc.text != "" && e.Text != tc.text) || string(e.Raw) != tc.line {
			t.Errorf("%s:\n got %+v", tc.line, e)
		}
	}
}

func TestParsePlayers(t *testing.T) {
	t.Parallel()
	out := "1. id=171, Ann, the 2nd, pos=(-12.5, 61.1, 300.0), rot=(0.0, 90.0, 0.0), remote=True, health=100, deaths=2, zombies=33, players=1, score=50, level=7, pltfmid=Steam_76561198000000001, crossid=EOS_0002, ip=203.0.113.5, ping=31\n" +
		"Total of 1 in the game"
	ps, err := ParsePlayers(out)
	if err != nil || len(ps) != 1 {
		t.Fatalf("ParsePlayers = %+v, %v", ps, err)
	}
	p := ps[0]
	if p.EntityID != 171 || p.Name != "Ann, the 2nd" || p.Position != "(-12.5, 61.1, 300.0)" || p.Health != 100 || p.Zombies != 33 ||
		p.Level != 7 || p.PlatformID != "Steam_76561198000000001" || p.CrossID != "EOS_0002" || p.IP != "203.0.113.5" || p.Ping != 31 {
		t.Errorf("player %+v", p)
	}
	if _, err := ParsePlayers("1. id=x, broken"); err == nil {
		t.Error("unreadable row accepted")
	}
}

func FuzzLineReader(f *testing.F) {
	f.Add([]byte("\x00Please enter password:\r\nLogon successful.\r\n"))
	f.Add([]byte("a\rb\nc"))
	f.Fuzz(func(t *testing.T, b []byte) {
		lr := NewLineReader(strings.NewReader(string(b)), 32)
		for range len(b) + 1 {
			line, err := lr.ReadLine()
			if err != nil {
				return
			}
			if len(line) > 32*2 || strings.ContainsAny(line, "\x00\n") {
				t.Fatalf("line %q: over the limit or with a NUL or line end", line)
			}
		}
		t.Fatal("more lines than bytes")
	})
}

func FuzzEvent(f *testing.F) {
	f.Add("2024-05-01T12:00:00 123.456 INF Chat (from 'Steam_1', entity id '171', to 'Global'): 'Ann': hi")
	f.Add("2024-05-01T12:00:01 124.000 INF Player connected, entityid=171, name=Ann, pltfmid=Steam_1")
	f.Add("1. id=171, Ann, pos=(1, 2, 3), rot=(0, 0, 0), remote=True, health=100, pltfmid=Steam_1, ip=1.2.3.4, ping=3")
	f.Fuzz(func(t *testing.T, line string) {
		if e := Event(line); string(e.Raw) != line {
			t.Fatal("event lost its line")
		}
		echoOf(line)
		ps, _ := ParsePlayers(line)
		if len(ps) > strings.Count(line, "\n")+1 {
			t.Fatal("more players than lines")
		}
	})
}

func TestIs(t *testing.T) {
	t.Parallel()
	for b, want := range map[string]bool{
		"Please enter password:\r\n":           true,
		"\x00\x00Please enter password:\r\n":   true,
		"*** Connected with 7DTD server.\r\n":  true,
		"\x0a\x00\x00\x00\x01\x00\x00\x00\x02": false,
		"HTTP/1.1 200 OK":                      false,
	} {
		if Is([]byte(b)) != want {
			t.Errorf("Is(%q) = %v", b, !want)
		}
	}
}
