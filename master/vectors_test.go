package master

import (
	"bytes"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/serverlist"
)

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// The field notes' query vector (section 8): every region, the seed
// 0.0.0.0:0, \appid\730\empty\1.
const notesQuery = "31 FF 302E302E302E303A30 00 5C61707069645C3733305C656D7074795C31 00"

func TestQueryVector(t *testing.T) {
	t.Parallel()
	want := testutil.Unhex(t, notesQuery)
	q := Query{Region: serverlist.RegionWorld, Filter: `\appid\730\empty\1`}
	got, err := q.AppendBinary(nil)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("AppendBinary = %x, %v\nwant            %x", got, err, want)
	}
	back, err := ParseQuery(want)
	if err != nil {
		t.Fatal(err)
	}
	if back.Region != serverlist.RegionWorld || back.Seed != Seed || back.Filter != q.Filter {
		t.Errorf("ParseQuery = %+v", back)
	}
	// The shortest query: an empty filter.
	short, _ := (&Query{Region: serverlist.RegionEurope}).AppendBinary(nil)
	if len(short) != MinQueryLen || !bytes.Equal(short, testutil.Unhex(t, "31 03 302E302E302E303A30 00 00")) {
		t.Errorf("empty filter, Europe: %x (%d bytes), want %d bytes", short, len(short), MinQueryLen)
	}
	// A seed taken from a reply is sent as text.
	next, _ := (&Query{Region: serverlist.RegionUSEast, Seed: ap("203.0.113.7:27015")}).AppendBinary(nil)
	if want := "1\x00203.0.113.7:27015\x00\x00"; string(next) != want {
		t.Errorf("seeded query %q, want %q", next, want)
	}
}

// The notes' reply layout: the header, 6-byte entries with big-endian
// ports, and the sentinel 0.0.0.0:0 at the end of the list.
func TestReplyVector(t *testing.T) {
	t.Parallel()
	b := testutil.Unhex(t, "FFFFFFFF660A CB007107 6987 C0000201 0050 000000000000")
	addrs, end, err := ParseReply(b, nil)
	if err != nil || !end {
		t.Fatalf("ParseReply: end %v, %v", end, err)
	}
	want := []netip.AddrPort{ap("203.0.113.7:27015"), ap("192.0.2.1:80")}
	if !slices.Equal(addrs, want) {
		t.Errorf("addresses %v, want %v", addrs, want)
	}
	again, err := AppendReply(nil, want, true)
	if err != nil || !bytes.Equal(again, b) {
		t.Errorf("AppendReply = %x, %v, want %x", again, err, b)
	}
	// Without the sentinel the list goes on; entries after it are not
	// read; the header alone is a reply with nothing in it.
	mid, end, err := ParseReply(b[:len(b)-EntryLen], []netip.AddrPort{ap("1.1.1.1:1")})
	if err != nil || end || len(mid) != 3 {
		t.Errorf("no sentinel: %v, end %v, %v", mid, end, err)
	}
	after, end, err := ParseReply(append(slices.Clone(b), 1, 2, 3, 4, 0, 5), nil)
	if err != nil || !end || len(after) != 2 {
		t.Errorf("an entry after the sentinel: %v, end %v, %v", after, end, err)
	}
	if empty, end, err := ParseReply(b[:ReplyHeaderLen], nil); err != nil || end || len(empty) != 0 {
		t.Errorf("header alone: %v, end %v, %v", empty, end, err)
	}
	if !IsReply(b) || IsReply(b[:5]) || IsReply(testutil.Unhex(t, notesQuery)) {
		t.Error("IsReply")
	}
}

// Every prefix of a reply that cuts an entry, and every prefix of a query
// that cuts the seed, is an error that says where, never a panic.
func TestTruncated(t *testing.T) {
	t.Parallel()
	reply, _ := AppendReply(nil, []netip.AddrPort{ap("10.0.0.1:1"), ap("10.0.0.2:2")}, true)
	for i := range len(reply) {
		_, _, err := ParseReply(reply[:i], nil)
		whole := i >= ReplyHeaderLen && (i-ReplyHeaderLen)%EntryLen == 0
		var pe *ParseError
		switch {
		case whole && err != nil:
			t.Errorf("reply[:%d]: %v", i, err)
		case !whole && (!errors.As(err, &pe) || pe.Message != "reply"):
			t.Errorf("reply[:%d]: %v, want a *ParseError of the reply", i, err)
		case !whole && i >= ReplyHeaderLen && (!errors.Is(err, ErrTruncated) || pe.Offset != i-(i-ReplyHeaderLen)%EntryLen):
			t.Errorf("reply[:%d]: %v, want ErrTruncated at the last whole entry", i, err)
		}
	}
	query := testutil.Unhex(t, notesQuery)
	for i := range 12 { // up to the seed's NUL
		if _, err := ParseQuery(query[:i]); err == nil {
			t.Errorf("query[:%d] parsed", i)
		}
	}
	// A filter without its NUL reads to the end.
	if q, err := ParseQuery(query[:len(query)-1]); err != nil || q.Filter != `\appid\730\empty\1` {
		t.Errorf("no final NUL: %+v, %v", q, err)
	}
}

func TestQueryErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		b    []byte
		err  error
		off  int
	}{
		{"empty", nil, ErrBadHeader, 0},
		{"reply", testutil.Unhex(t, "FFFFFFFF660A"), ErrBadHeader, 0},
		{"no seed NUL", []byte("1\xff0.0.0.0:0"), ErrTruncated, 11},
		{"host name", []byte("1\xffexample.com:1\x00\x00"), ErrBadSeed, 2},
		{"no port", []byte("1\xff1.2.3.4\x00\x00"), ErrBadSeed, 2},
		{"IPv6", []byte("1\xff[::1]:1\x00\x00"), ErrBadSeed, 2},
		{"huge filter", append([]byte("1\xff0.0.0.0:0\x00"), bytes.Repeat([]byte("a"), serverlist.MaxFilterLen+1)...), ErrTooLarge, 12},
	} {
		_, err := ParseQuery(tc.b)
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, tc.err) || pe.Offset != tc.off || pe.Message != "query" {
			t.Errorf("%s: %v, want %v at offset %d", tc.name, err, tc.err, tc.off)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "master: parse query at offset ") || strings.Count(msg, "master: ") != 1 {
			t.Errorf("%s: message %q", tc.name, msg)
		}
	}
	for _, tc := range []struct {
		q   Query
		err error
	}{
		{Query{Seed: ap("[2001:db8::1]:27015")}, ErrNotIPv4},
		{Query{Filter: "\\map\\a\x00"}, ErrNULInText},
		{Query{Filter: strings.Repeat("a", serverlist.MaxFilterLen+1)}, ErrTooLarge},
		{Query{Region: serverlist.RegionNone}, nil},
		{Query{Region: 256}, nil},
	} {
		b, err := tc.q.AppendBinary([]byte("x"))
		if err == nil || tc.err != nil && !errors.Is(err, tc.err) || string(b) != "x" {
			t.Errorf("AppendBinary(%+v) = %q, %v; want the buffer unchanged and %v", tc.q, b, err, tc.err)
		}
	}
	// An IPv4-mapped seed is sent as IPv4.
	if b, err := (&Query{Seed: ap("[::ffff:10.0.0.1]:5")}).AppendBinary(nil); err != nil || !bytes.Contains(b, []byte("\x0010.0.0.1:5\x00")) {
		t.Errorf("mapped seed: %q, %v", b, err)
	}
	for _, bad := range [][]netip.AddrPort{{ap("[2001:db8::1]:1")}, {Seed}} {
		if _, err := AppendReply(nil, bad, false); !errors.Is(err, ErrNotIPv4) {
			t.Errorf("AppendReply(%v): %v, want ErrNotIPv4", bad, err)
		}
	}
}

// Page pages as a master does: after the seed, at most size entries with
// the marker, a seed that left the list losing no place.
func TestPage(t *testing.T) {
	t.Parallel()
	var list []netip.AddrPort
	for i := 1; i <= 10; i++ {
		list = append(list, netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}), 27015))
	}
	for _, tc := range []struct {
		seed      netip.AddrPort
		size      int
		first     int // index of the first entry; len(list) for none
		n         int
		end       bool
		situation string
	}{
		{Seed, 4, 0, 4, false, "the first page"},
		{netip.AddrPort{}, 4, 0, 4, false, "the zero seed"},
		{list[3], 4, 4, 4, false, "after a seed"},
		{list[7], 4, 8, 2, true, "the last page, with room for the marker"},
		{list[5], 4, 6, 4, false, "four left, a page of four: full, the marker on the next"},
		{list[5], 5, 6, 4, true, "four left, a page of five: the marker fits"},
		{list[9], 4, 10, 0, true, "after the last: the marker alone"},
		{ap("10.0.0.4:27000"), 4, 3, 4, false, "a seed that left the list"},
		{ap("10.0.0.200:1"), 4, 10, 0, true, "a seed beyond the list"},
		{Seed, 0, 0, 2, false, "a size below 2 is 2"},
		{Seed, 100, 0, 10, true, "one page"},
	} {
		page, end := Page(list, tc.seed, tc.size)
		want := list[tc.first : tc.first+tc.n]
		if !slices.Equal(page, want) || end != tc.end {
			t.Errorf("%s: %v end %v, want %v end %v", tc.situation, page, end, want, tc.end)
		}
	}
}
