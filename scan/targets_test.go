package scan

import (
	"errors"
	"io"
	"net/netip"
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // Target.String(), or "" for an error
		addr bool   // an IP literal
	}{
		{"127.0.0.1", "127.0.0.1:27015", true},
		{"127.0.0.1:27016", "127.0.0.1:27016", true},
		{"[::1]:27016", "[::1]:27016", true},
		{"::1", "[::1]:27015", true},
		{"[::ffff:127.0.0.1]:5", "127.0.0.1:5", true},
		{"play.example.com", "play.example.com:27015", false},
		{"play.example.com:28000", "play.example.com:28000", false},
		{"127.0.0.1:0", "", false},
		{"127.0.0.1:70000", "", false},
		{"127.0.0.1:x", "", false},
		{"a:b:c", "", false},
		{":27015", "", false},
		{"two words", "", false},
		{"[::1]", "[::1]:27015", true},
	}
	for _, tt := range tests {
		got := ParseTarget(1, tt.in, 27015)
		if tt.want == "" {
			if !errors.Is(got.Err, ErrBadTarget) {
				t.Errorf("ParseTarget(%q) = %+v, want ErrBadTarget", tt.in, got)
			}
			continue
		}
		if got.Err != nil || got.String() != tt.want || got.Addr.IsValid() != tt.addr {
			t.Errorf("ParseTarget(%q) = %+v (%s), want %s", tt.in, got, got.String(), tt.want)
		}
	}
	if got := ParseTarget(1, "127.0.0.1", 0); got.Err == nil {
		t.Errorf("no port and no default accepted: %+v", got)
	}
	// The error says where and what, and the input is kept as written.
	got := ParseTarget(7, " [::1 ", 27015)
	var te *TargetError
	if !errors.As(got.Err, &te) || te.Line != 7 || got.Input != "[::1" ||
		got.Err.Error() != `scan: bad target: line 7: "[::1" is missing its closing ']'` {
		t.Errorf("ParseTarget([::1) = %+v", got)
	}
}

// A list that starts with a byte-order mark and a comment.
func TestTargetReaderByteOrderMark(t *testing.T) {
	t.Parallel()
	tr := NewTargetReader(strings.NewReader("\uFEFF# servers\n127.0.0.1:5\n"), 27015)
	tg, err := tr.Next()
	if err != nil || tg.Err != nil || tg.String() != "127.0.0.1:5" || tg.Line != 2 {
		t.Errorf("%+v, %v", tg, err)
	}
}

func TestTargetReader(t *testing.T) {
	t.Parallel()
	in := "# servers\n\n  127.0.0.1:1  \r\n127.0.0.1:2 # trailing comment\nbad:target:x\n" +
		strings.Repeat("x", MaxLineLength+10) + "\nexample.com#not-a-comment\n127.0.0.1:3"
	tr := NewTargetReader(strings.NewReader(in), 27015)
	var got []string
	for {
		tg, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if tg.Err != nil {
			got = append(got, "error@"+string(rune('0'+tg.Line)))
			if tg.Line == 6 && (!errors.Is(tg.Err, ErrLineTooLong) || tg.Input != strings.Repeat("x", 64)+"...") {
				t.Errorf("long line: %+v", tg)
			}
			continue
		}
		got = append(got, tg.String())
	}
	want := []string{"127.0.0.1:1", "127.0.0.1:2", "error@5", "error@6", "error@7", "127.0.0.1:3"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func FuzzTargetReader(f *testing.F) {
	for _, s := range []string{"127.0.0.1:27015\n", "# c\n\n[::1]:1\nhost\n", "a:b:c\r\n", "[", "::ffff:1.2.3.4", strings.Repeat("9", 2000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		tr := NewTargetReader(strings.NewReader(in), 27015)
		for range len(in) + 1 {
			tg, err := tr.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tg.Err == nil {
				if tg.Port == 0 || tg.Host == "" {
					t.Fatalf("accepted %+v", tg)
				}
				if tg.Addr.IsValid() {
					if back, err := netip.ParseAddrPort(tg.String()); err != nil || back != tg.Addr {
						t.Fatalf("%+v prints as %q", tg, tg.String())
					}
				}
			}
		}
		t.Fatal("more targets than bytes")
	})
}
