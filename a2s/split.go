package a2s

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"sync"

	"github.com/gsq-project/gsq/internal/bzip2"
	"github.com/gsq-project/gsq/internal/wire"
)

// SplitFormat is the layout of a multi-packet (0xFFFFFFFE) fragment header.
type SplitFormat uint8

// Split formats.
const (
	// SplitSource: ID, Total, Number, Size (Orange Box engine and later).
	SplitSource SplitFormat = iota
	// SplitSourceNoSize: ID, Total, Number, without Size (pre-Orange Box
	// engines, and every bzip2-compressed reply seen in the wild).
	SplitSourceNoSize
	// SplitGoldSource: ID and one byte (Number<<4 | Total).
	SplitGoldSource
)

// String returns "source", "source-nosize" or "goldsource".
func (f SplitFormat) String() string {
	switch f {
	case SplitSource:
		return "source"
	case SplitSourceNoSize:
		return "source-nosize"
	case SplitGoldSource:
		return "goldsource"
	}
	return fmt.Sprintf("SplitFormat(%d)", uint8(f))
}

// compressedBit is the ID bit that marks a bzip2-compressed Source reply.
const compressedBit = 0x80000000

// Split defaults and format limits.
const (
	DefaultSplitSize        = 1248    // Source payload bytes per fragment (datagram 1260); L4D2/CS:GO use 1188
	DefaultSplitSizeGold    = 1391    // GoldSource payload bytes per fragment (datagram 1400)
	MaxFragmentsGoldSource  = 15      // the 4-bit total of the GoldSource format
	DefaultMaxFragments     = 64      // Reassembler.MaxFragments default
	DefaultMaxFragmentSize  = 4096    // Reassembler.MaxFragmentSize default (datagram bytes)
	DefaultMaxDecompressed  = 1 << 20 // Reassembler.MaxDecompressed default
	DefaultMaxPendingSplits = 8       // Reassembler.MaxPending default
	// DefaultMaxDecompressionRatio is the Reassembler.MaxDecompressionRatio
	// default. Real compressed replies shrink 4 to 8 times (rule and
	// player lists); 32 leaves room for odd ones.
	DefaultMaxDecompressionRatio = 32
	// MinDecompressedAllowance is the size a compressed reply may always
	// decompress to, whatever its ratio: a few kilobytes of zeros (a full
	// player list of nameless bots) shrink more than any ratio a real
	// server needs beyond that.
	MinDecompressedAllowance = 4 << 10
)

// Fragment is one datagram of a multi-packet reply.
type Fragment struct {
	ID     uint32 // as sent; bit 31 set means Compressed
	Total  uint8  // fragments in the reply
	Number uint8  // this fragment, from 0
	Size   uint16 // SplitSource only: the server's split size
	// Compressed is set when the reply was bzip2-compressed before being
	// split (Source only). Fragment 0 of such a reply carries the size and
	// CRC32 of the decompressed reply.
	Compressed       bool
	DecompressedSize uint32
	CRC              uint32
	Payload          []byte // aliases the datagram given to ParseFragment
	Format           SplitFormat

	raw  []byte // the datagram, when parsed
	sure bool   // Format was recognised from a first-fragment signature
}

// ParseFragment parses a 0xFFFFFFFE datagram. The header layout is not
// announced, so it is detected from the datagram itself:
//
//   - a compressed fragment 0 has "BZh" at offset 20 (Source) or 18 (no Size);
//   - an uncompressed fragment 0 carries the nested 0xFFFFFFFF header at
//     offset 12 (Source), 10 (no Size) or 9 (GoldSource), or, for servers
//     that leave the nested header out, a reply type byte there;
//   - any other fragment is Source if bytes 10-11 are a plausible Size,
//     else GoldSource if byte 8 reads as Number<<4|Total with Number > 0,
//     else Source without Size.
//
// A [Reassembler] re-reads every fragment of a reply with the format of its
// fragment 0, so a wrong guess on a later fragment is harmless.
func ParseFragment(b []byte) (Fragment, error) {
	if len(b) < 4 {
		return Fragment{}, parseErr("fragment", 0, ErrTruncated)
	}
	if binary.LittleEndian.Uint32(b) != HeaderSplit {
		return Fragment{}, parseErr("fragment", 0, ErrBadHeader)
	}
	f, sure := detectSplitFormat(b)
	fr, err := parseFragmentAs(b, f)
	fr.sure = sure
	return fr, err
}

// parseFragmentAs parses b, which starts with HeaderSplit, as format f.
func parseFragmentAs(b []byte, f SplitFormat) (Fragment, error) {
	d := decoder{r: wire.NewReader(b), packet: "fragment"}
	d.u32()
	fr := Fragment{ID: d.u32(), Format: f, raw: b}
	if f == SplitGoldSource {
		x := d.u8()
		fr.Number, fr.Total = x>>4, x&0x0F
	} else {
		fr.Total = d.u8()
		fr.Number = d.u8()
		if f == SplitSource {
			fr.Size = d.u16()
		}
		fr.Compressed = fr.ID&compressedBit != 0
		if fr.Compressed && fr.Number == 0 {
			fr.DecompressedSize = d.u32()
			fr.CRC = d.u32()
		}
	}
	if d.err != nil {
		return Fragment{}, d.err
	}
	if fr.Total == 0 || fr.Number >= fr.Total {
		return Fragment{}, parseErr("fragment", 8,
			fmt.Errorf("%w: number %d of %d", ErrBadFragment, fr.Number, fr.Total))
	}
	fr.Payload = d.r.Rest()
	return fr, nil
}

// detectSplitFormat guesses the header layout of a split datagram; sure is
// set when a fragment-0 signature was found.
func detectSplitFormat(b []byte) (f SplitFormat, sure bool) {
	if len(b) < 10 {
		return SplitGoldSource, false
	}
	id := binary.LittleEndian.Uint32(b[4:])
	if id&compressedBit != 0 {
		switch {
		case b[9] == 0 && hasAt(b, 20, "BZh"):
			return SplitSource, true
		case b[9] == 0 && hasAt(b, 18, "BZh"):
			return SplitSourceNoSize, true
		case plausibleSize(b):
			return SplitSource, false
		}
		return SplitSourceNoSize, false
	}
	const nested = "\xFF\xFF\xFF\xFF"
	switch {
	case b[9] == 0 && hasAt(b, 12, nested):
		return SplitSource, true
	case b[9] == 0 && hasAt(b, 10, nested):
		return SplitSourceNoSize, true
	case b[8]>>4 == 0 && hasAt(b, 9, nested):
		return SplitGoldSource, true
	case b[9] == 0 && len(b) > 12 && isReplyType(b[12]) && plausibleSize(b):
		return SplitSource, true
	case b[9] == 0 && len(b) > 10 && isReplyType(b[10]):
		return SplitSourceNoSize, true
	case b[8]>>4 == 0 && isReplyType(b[9]):
		return SplitGoldSource, true
	case b[9] < b[8] && plausibleSize(b):
		return SplitSource, false
	case b[8]>>4 != 0 && b[8]>>4 < b[8]&0x0F:
		return SplitGoldSource, false
	}
	return SplitSourceNoSize, false
}

func hasAt(b []byte, off int, s string) bool {
	return len(b) >= off+len(s) && string(b[off:off+len(s)]) == s
}

// plausibleSize reports whether bytes 10-11 look like a Source Size field:
// at least this fragment's payload and at most DefaultMaxFragmentSize.
func plausibleSize(b []byte) bool {
	if len(b) < 12 {
		return false
	}
	size := int(binary.LittleEndian.Uint16(b[10:]))
	return size >= len(b)-12 && size <= DefaultMaxFragmentSize
}

// isReplyType reports whether c is the type byte of a reply that can be split.
func isReplyType(c byte) bool {
	switch c {
	case TypeInfoReply, TypeInfoReplyGoldSource, TypePlayerReply, TypeRulesReply:
		return true
	}
	return false
}

// AppendBinary appends the fragment datagram in its Format. Bit 31 of the
// ID is set when Compressed is, and fragment 0 of a compressed reply
// carries DecompressedSize and CRC.
func (f Fragment) AppendBinary(b []byte) ([]byte, error) {
	if f.Total == 0 || f.Number >= f.Total {
		return b, fmt.Errorf("%w: number %d of %d", ErrBadFragment, f.Number, f.Total)
	}
	id := f.ID
	if f.Compressed {
		id |= compressedBit
	}
	out := wire.AppendUint32(b, HeaderSplit)
	out = wire.AppendUint32(out, id)
	switch f.Format {
	case SplitGoldSource:
		if f.Total > MaxFragmentsGoldSource || f.Compressed {
			return b, fmt.Errorf("%w: goldsource fragment %d of %d (compressed %v)", ErrBadFragment, f.Number, f.Total, f.Compressed)
		}
		out = append(out, f.Number<<4|f.Total)
	case SplitSource, SplitSourceNoSize:
		out = append(out, f.Total, f.Number)
		if f.Format == SplitSource {
			out = wire.AppendUint16(out, f.Size)
		}
		if id&compressedBit != 0 && f.Number == 0 {
			out = wire.AppendUint32(out, f.DecompressedSize)
			out = wire.AppendUint32(out, f.CRC)
		}
	default:
		return b, fmt.Errorf("%w: unknown format %v", ErrBadFragment, f.Format)
	}
	return append(out, f.Payload...), nil
}

// SplitWriter cuts a reply into fragments, for servers. Its zero value
// writes Source fragments of DefaultSplitSize payload bytes.
type SplitWriter struct {
	Format SplitFormat
	// Size is the payload bytes per fragment, at least 64: 0 means
	// DefaultSplitSize for the Source formats (1188 is the other common
	// value) and DefaultSplitSizeGold for GoldSource. It is also the value
	// of the Source Size field.
	Size int
}

// minSplitSize keeps fragment counts sane.
const minSplitSize = 64

// AppendFragments appends the datagrams that carry payload (a whole reply,
// 0xFFFFFFFF header included) to dst. A payload that fits in one fragment
// is appended as a single unsplit datagram. Compression is not supported,
// so bit 31 of id must be clear. Each datagram reuses the backing array of
// dst's spare capacity when there is any.
func (w SplitWriter) AppendFragments(dst [][]byte, id uint32, payload []byte) ([][]byte, error) {
	size := w.Size
	maxTotal := 255
	if w.Format == SplitGoldSource {
		maxTotal = MaxFragmentsGoldSource
		if size == 0 {
			size = DefaultSplitSizeGold
		}
	} else if size == 0 {
		size = DefaultSplitSize
	}
	if size < minSplitSize || size > MaxPacketSize-12 {
		return dst, fmt.Errorf("%w: split size %d", ErrTooLarge, size)
	}
	if id&compressedBit != 0 {
		return dst, fmt.Errorf("%w: id %#x has the compression bit set", ErrBadFragment, id)
	}
	if len(payload) <= size {
		return append(dst, append(spare(dst), payload...)), nil
	}
	total := (len(payload) + size - 1) / size
	if total > maxTotal {
		return dst, fmt.Errorf("%w: %d bytes need %d %v fragments of %d, at most %d", ErrTooLarge, len(payload), total, w.Format, size, maxTotal)
	}
	n0 := len(dst)
	for i := range total {
		chunk := payload[i*size : min((i+1)*size, len(payload))]
		f := Fragment{ID: id, Total: uint8(total), Number: uint8(i), Size: uint16(size), Payload: chunk, Format: w.Format}
		datagram, err := f.AppendBinary(spare(dst))
		if err != nil {
			return dst[:n0], err
		}
		dst = append(dst, datagram)
	}
	return dst, nil
}

// spare returns the zero-length start of dst's next element, reusing its
// backing array if dst has spare capacity.
func spare(dst [][]byte) []byte {
	if len(dst) < cap(dst) {
		return dst[:len(dst)+1][len(dst)][:0]
	}
	return nil
}

// Reassembler collects the fragments of split replies and returns each
// reply once complete. It keeps several replies (split IDs) in flight,
// tolerates fragments out of order and duplicated, and decompresses bzip2
// replies after checking their size and CRC32. Every limit has a default
// used when the field is zero or negative. A Reassembler is not safe for
// concurrent use; a client keeps one per server.
//
// What a peer can make it spend is bounded: it holds at most MaxPending
// replies of MaxFragments datagrams of MaxFragmentSize bytes each (2 MiB
// with the defaults), and a compressed reply is refused before any
// decompression unless the size it announces is within MaxDecompressed
// and within MaxDecompressionRatio times the compressed bytes received
// (or MinDecompressedAllowance). Decompression then stops as soon as the
// stream would produce more than announced, before it transforms an
// oversized block, so its CPU and memory are linear in the announced
// size: a few bytes of bzip2 that would expand to megabytes cost about as
// much as the ratio allows, not what the stream claims.
type Reassembler struct {
	MaxFragments    int // fragments per reply (default DefaultMaxFragments)
	MaxFragmentSize int // bytes per fragment datagram (default DefaultMaxFragmentSize)
	MaxDecompressed int // bytes of a decompressed reply (default DefaultMaxDecompressed)
	MaxPending      int // replies in flight; the oldest is dropped (default DefaultMaxPendingSplits)
	// MaxDecompressionRatio is the most bytes a compressed reply may
	// announce per byte of compressed data received (default
	// DefaultMaxDecompressionRatio); replies of up to
	// MinDecompressedAllowance bytes are exempt.
	MaxDecompressionRatio int

	pending []*pendingSplit // oldest first
}

type pendingSplit struct {
	id     uint32
	format SplitFormat
	sure   bool   // format came from a fragment-0 signature
	buf    []byte // the distinct datagrams received, copied back to back
	ends   []int  // where each datagram ends in buf
}

// raw returns the i-th datagram held.
func (p *pendingSplit) raw(i int) []byte {
	start := 0
	if i > 0 {
		start = p.ends[i-1]
	}
	return p.buf[start:p.ends[i]:p.ends[i]]
}

// splitPool recycles pendingSplits, and with them the storage of their
// datagrams, across Reassemblers: a client drops one per split reply.
var splitPool = sync.Pool{New: func() any { return new(pendingSplit) }}

// maxPooledSplit bounds the datagram storage kept by a pooled pendingSplit.
const maxPooledSplit = 64 << 10

func putSplit(p *pendingSplit) {
	if cap(p.buf) > maxPooledSplit {
		return
	}
	p.buf, p.ends = p.buf[:0], p.ends[:0]
	splitPool.Put(p)
}

// Reset drops every partial reply.
func (r *Reassembler) Reset() {
	for i, p := range r.pending {
		putSplit(p)
		r.pending[i] = nil
	}
	r.pending = r.pending[:0]
}

// Add adds one fragment. When it completes a reply, Add returns the reply
// with done set; the payload always starts with the 0xFFFFFFFF header,
// whether or not the server nested it in the fragments, so it can go
// straight to ParseInfo, ParsePlayers or ParseRules. The payload is a
// fresh slice that the caller owns.
//
// A duplicate of a fragment already held is ignored; a different datagram
// with the same number replaces the earlier one. A duplicate arriving after
// its reply completed starts a new partial reply, which is eventually
// evicted (or completes again if the reply had a single fragment). An
// error drops the
// reply the fragment belongs to; other replies in flight are kept.
// Fragments built by hand (not by ParseFragment) are taken at their word:
// their Format decides. The announced total is checked against
// MaxFragments once the format is certain (fragment 0 seen), so a later
// fragment whose format was guessed wrong cannot drop the reply.
// MaxFragments also bounds the distinct datagrams held per reply.
func (r *Reassembler) Add(f Fragment) (payload []byte, done bool, err error) {
	raw, sure := f.raw, f.sure
	if raw == nil {
		if raw, err = f.AppendBinary(nil); err != nil {
			return nil, false, err
		}
		sure = true
	}
	maxFrags := cmp.Or(max(r.MaxFragments, 0), DefaultMaxFragments)
	if max := cmp.Or(max(r.MaxFragmentSize, 0), DefaultMaxFragmentSize); len(raw) > max {
		r.drop(f.ID)
		return nil, false, fmt.Errorf("%w: %d bytes, limit %d", ErrFragmentTooLarge, len(raw), max)
	}
	if sure && int(f.Total) > maxFrags {
		r.drop(f.ID)
		return nil, false, tooManyFragments(int(f.Total), maxFrags)
	}
	p := r.lookup(f.ID)
	for i := range p.ends {
		if bytes.Equal(p.raw(i), raw) {
			return nil, false, nil
		}
	}
	if len(p.ends) >= maxFrags {
		r.drop(f.ID)
		return nil, false, fmt.Errorf("%w: more than %d distinct fragments for id %#x", ErrTooManyFragments, maxFrags, f.ID)
	}
	p.buf = append(p.buf, raw...)
	p.ends = append(p.ends, len(p.buf))
	if sure && !p.sure {
		p.format, p.sure = f.Format, true
	} else if !p.sure {
		p.format = f.Format
	}
	payload, done, err = r.complete(p, maxFrags)
	if done || err != nil {
		r.drop(f.ID)
	}
	return payload, done, err
}

func tooManyFragments(total, limit int) error {
	return fmt.Errorf("%w: %d announced, limit %d", ErrTooManyFragments, total, limit)
}

// lookup returns the pending reply for id, creating it (and evicting the
// oldest when full).
func (r *Reassembler) lookup(id uint32) *pendingSplit {
	for _, p := range r.pending {
		if p.id == id {
			return p
		}
	}
	if n := len(r.pending); n >= cmp.Or(max(r.MaxPending, 0), DefaultMaxPendingSplits) {
		putSplit(r.pending[0])
		copy(r.pending, r.pending[1:])
		r.pending[n-1] = nil
		r.pending = r.pending[:n-1]
	}
	p := splitPool.Get().(*pendingSplit)
	p.id, p.format, p.sure = id, 0, false
	r.pending = append(r.pending, p)
	return p
}

// held is the number of distinct fragments held for unfinished replies.
func (r *Reassembler) held() int {
	n := 0
	for _, p := range r.pending {
		n += len(p.ends)
	}
	return n
}

func (r *Reassembler) drop(id uint32) {
	for i, p := range r.pending {
		if p.id == id {
			putSplit(p)
			n := len(r.pending)
			copy(r.pending[i:], r.pending[i+1:])
			r.pending[n-1] = nil
			r.pending = r.pending[:n-1]
			return
		}
	}
}

// complete reads the held datagrams with the reply's format and assembles
// the reply if every fragment is there. Inconsistencies are errors only
// once the format is known for sure; before that they may be a wrong guess.
func (r *Reassembler) complete(p *pendingSplit, maxFrags int) ([]byte, bool, error) {
	var (
		index [256]int16 // fragment number -> index of its datagram + 1
		total int
		have  int
		first Fragment
	)
	for i := range p.ends {
		fr, err := parseFragmentAs(p.raw(i), p.format)
		if err == nil && total != 0 && int(fr.Total) != total {
			err = parseErr("fragment", 8, fmt.Errorf("%w: total %d, earlier fragments said %d", ErrBadFragment, fr.Total, total))
		}
		if err == nil && int(fr.Total) > maxFrags {
			err = tooManyFragments(int(fr.Total), maxFrags)
		}
		if err != nil {
			if p.sure {
				return nil, false, err
			}
			return nil, false, nil
		}
		total = int(fr.Total)
		if index[fr.Number] == 0 {
			have++
		}
		// The latest datagram for a number wins: an earlier one may be a
		// late duplicate from a previous reply that reused the ID.
		index[fr.Number] = int16(i + 1)
		if fr.Number == 0 {
			first = fr
		}
	}
	if have < total {
		return nil, false, nil
	}
	// Two passes over the (already validated) headers: size, then copy.
	size := 0
	for n := range total {
		fr, _ := parseFragmentAs(p.raw(int(index[n]-1)), p.format)
		size += len(fr.Payload)
	}
	out := make([]byte, 4, 4+size)
	for n := range total {
		fr, _ := parseFragmentAs(p.raw(int(index[n]-1)), p.format)
		out = append(out, fr.Payload...)
	}
	body := out[4:]
	if first.Compressed {
		var err error
		if body, err = r.decompress(body, first.DecompressedSize, first.CRC); err != nil {
			return nil, false, err
		}
		if hasAt(body, 0, "\xFF\xFF\xFF\xFF") {
			return body, true, nil
		}
		return append(binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(body)), HeaderSimple), body...), true, nil
	}
	if hasAt(body, 0, "\xFF\xFF\xFF\xFF") {
		return body, true, nil
	}
	binary.LittleEndian.PutUint32(out, HeaderSimple)
	return out, true, nil
}

// decompress inflates a bzip2 reply of the announced size (capped by
// MaxDecompressed and by MaxDecompressionRatio times len(data)) and checks
// its CRC32. The work is linear in size plus len(data).
func (r *Reassembler) decompress(data []byte, size, crc uint32) ([]byte, error) {
	limit := cmp.Or(max(r.MaxDecompressed, 0), DefaultMaxDecompressed)
	if uint64(size) > uint64(limit) {
		return nil, fmt.Errorf("%w: %d bytes announced, limit %d", ErrDecompressedTooLarge, size, limit)
	}
	ratio := cmp.Or(max(r.MaxDecompressionRatio, 0), DefaultMaxDecompressionRatio)
	if allowed := max(uint64(ratio)*uint64(len(data)), MinDecompressedAllowance); uint64(size) > allowed {
		return nil, fmt.Errorf("%w: %d bytes announced for %d compressed, more than %d times as many", ErrDecompressedTooLarge, size, len(data), ratio)
	}
	out := make([]byte, size)
	n, err := bzip2.Decode(out, data)
	switch {
	case errors.Is(err, bzip2.ErrTooLarge):
		return nil, fmt.Errorf("%w: more than the %d bytes announced", ErrDecompressedTooLarge, size)
	case err != nil:
		return nil, fmt.Errorf("%w: %s", ErrDecompress, strings.TrimPrefix(err.Error(), "bzip2: "))
	case n < len(out):
		return nil, fmt.Errorf("%w: %d bytes, shorter than the %d announced", ErrDecompress, n, size)
	}
	if got := crc32.ChecksumIEEE(out); got != crc {
		return nil, fmt.Errorf("%w: crc32 %#08x, announced %#08x", ErrChecksum, got, crc)
	}
	return out, nil
}
