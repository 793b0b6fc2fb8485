package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/mctext"
)

// An output without line feeds (a hostile server's endless stream, or a
// long JSON blob) is still decoded and written in bounded pieces, so the
// CLI holds no second copy of a 64 MB answer; and no piece boundary
// changes the text: UTF-8 sequences, CR LF and § codes stay whole.
func TestChunksBoundedWithoutLineFeeds(t *testing.T) {
	t.Parallel()
	unit := []string{
		"é",             // a 2-byte sequence
		"😀",             // a 4-byte sequence
		"\r\n",          // CR LF, made one line feed on a terminal
		"§a",            // a Minecraft colour code
		"\xa7b",         // § as a Latin-1 byte, and its code
		"ç",             // C3 A7: its second byte is not a §
		"\xff\xfe",      // bytes outside UTF-8, read as Latin-1
		"😀\x80\x80\x80", // stray continuation bytes after a sequence
		"\x80",
		"x",
	}
	for _, u := range unit {
		for shift := range 4 {
			// The unit repeated so that one lands across every cut point.
			b := []byte(strings.Repeat("y", shift) + strings.Repeat(u, 3*outputChunk/len(u)+7))
			var pieces [][]byte
			chunks(b, func(p []byte) { pieces = append(pieces, p) })
			if len(pieces) < 3 {
				t.Fatalf("%q: %d pieces for %d bytes without a line feed, want at least 3", u, len(pieces), len(b))
			}
			var joined []byte
			var decoded, stripped, visible strings.Builder
			for _, p := range pieces {
				if len(p) > 2*outputChunk || len(p) == 0 {
					t.Fatalf("%q: a piece of %d bytes (limit %d)", u, len(p), 2*outputChunk)
				}
				joined = append(joined, p...)
				s := rcon.DecodeText(p)
				decoded.WriteString(s)
				stripped.WriteString(mctext.Strip(s))
				visible.WriteString(visibleControls(s))
			}
			if !bytes.Equal(joined, b) {
				t.Fatalf("%q: the pieces do not make up the output", u)
			}
			whole := rcon.DecodeText(b)
			if decoded.String() != whole {
				t.Errorf("%q shift %d: decoding the pieces differs from decoding the whole", u, shift)
			}
			if stripped.String() != mctext.Strip(whole) {
				t.Errorf("%q shift %d: stripping the pieces differs from stripping the whole", u, shift)
			}
			if visible.String() != visibleControls(whole) {
				t.Errorf("%q shift %d: the terminal text of the pieces differs from the whole's", u, shift)
			}
		}
	}
}

// Output that prints as it is goes out without a decoded copy, and
// prints the same as through decoding and rendering: a printer that
// wrote the bytes unchanged where they must change would fail here.
func TestResultVerbatim(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"plain\n", "grüße € 😀", "tab\there\n", "", "no newline",
		"§aGreen§r", "\xa7b", "esc\x1b[2J", "cr\r\nlf", "c1 \u0085", "bad \xff\xfe", "nul\x00",
	} {
		for _, enc := range []string{"auto", "utf8", "latin1"} {
			for _, terminal := range []bool{false, true} {
				var fast, slow strings.Builder
				env := &Env{Stdout: &fast, Getenv: func(string) string { return "" }, IsTerminal: func(any) bool { return terminal }}
				p := newRconPrinter(env, &rconOptions{encoding: enc, noColor: true})
				p.result("c", &rcon.Response{Body: []byte(s)}, decoders[enc], nil)
				// The decoding path alone, as before verbatim existed.
				text := p.render(decoders[enc]([]byte(s)))
				slow.WriteString(text)
				if text != "" && !strings.HasSuffix(text, "\n") {
					slow.WriteString("\n")
				}
				if fast.String() != slow.String() {
					t.Errorf("%q (%s, terminal %v): printed %q, want %q", s, enc, terminal, fast.String(), slow.String())
				}
			}
			// --json: the output is the decoded text.
			var out strings.Builder
			env := &Env{Stdout: &out, Getenv: func(string) string { return "" }, IsTerminal: func(any) bool { return false }}
			newRconPrinter(env, &rconOptions{encoding: enc, json: true}).result("c", &rcon.Response{Body: []byte(s)}, decoders[enc], nil)
			var o struct{ Output string }
			if err := json.Unmarshal([]byte(out.String()), &o); err != nil || o.Output != decoders[enc]([]byte(s)) {
				t.Errorf("%q (%s) as JSON: %s, %v", s, enc, out.String(), err)
			}
		}
	}
}

// A long output that needs no decoding is written without a copy of it
// (an endless stream's 64 MB is held once, by the client).
func TestResultVerbatimAllocations(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef grüße\n"), 1<<16) // 1.5 MB
	env := &Env{Stdout: io.Discard, Getenv: func(string) string { return "" }, IsTerminal: func(any) bool { return false }}
	p := newRconPrinter(env, &rconOptions{encoding: "auto"})
	r := &rcon.Response{Body: body}
	allocs := testing.AllocsPerRun(5, func() { p.result("c", r, decoders["auto"], nil) })
	if allocs > 4 {
		t.Errorf("%v allocations to print %d bytes that need no decoding", allocs, len(body))
	}
	// --json: the encoder's 64 KB buffer, no copy per piece.
	p = newRconPrinter(env, &rconOptions{encoding: "auto", json: true})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p.result("c", r, decoders["auto"], nil)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(len(body))/4 {
		t.Errorf("--json allocated %d bytes to print %d that need no decoding", got, len(body))
	}
}
