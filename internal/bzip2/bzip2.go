// Package bzip2 reads and writes bzip2 data. [Decode] decompresses into a
// buffer of the size the caller expects, with work bounded by that size;
// [Compress] writes streams every bzip2 reader accepts, for the fake
// servers (see compress.go). A program that calls only Decode, as package
// a2s does, links no encoder.
//
// compress/bzip2 decodes a whole block before it hands out the first
// byte, and sizes its tables by the block size the stream's header
// announces (up to 900 kB): a stream of fifty bytes can make it decode
// 900 kB and allocate 3.6 MB however little output the caller reads. A
// network peer chooses those bytes. [Decode] instead knows the most
// output it may produce before it starts, and since the run-length stage
// of bzip2 turns every five bytes of a block into at least four bytes of
// output, it refuses a block as soon as the block grows past what that
// output allows. Its work and memory are therefore linear in the input
// plus the output buffer, whatever the stream claims.
//
// The format is the one of the reference bzip2 1.0 (Julian Seward's
// bzip2 and its format description): a "BZh" header whose digit sets the
// block size, blocks of Huffman-coded move-to-front symbols of a
// Burrows-Wheeler transform, each with the CRC of its output, and an end
// marker with the CRC of the stream. Randomized blocks (written only by
// bzip2 0.9.0, before 1998) are refused; so is a second stream
// concatenated to the first, which is left unread.
//
// It uses the standard library only.
package bzip2

import "errors"

// Errors returned by Decode. A stream that is damaged or truncated gives
// ErrFormat (wrapped with the detail); a stream whose data does not match
// its checksums gives ErrChecksum.
var (
	ErrFormat   = errors.New("bzip2: invalid data")
	ErrChecksum = errors.New("bzip2: checksum mismatch")
	// ErrTooLarge means the stream holds more output than dst has room
	// for. Decode returns it as soon as that is certain, which for a
	// block whose symbols expand too far is before the block is
	// transformed.
	ErrTooLarge = errors.New("bzip2: output larger than the buffer")
)

const (
	blockMagic = 0x314159265359 // π
	endMagic   = 0x177245385090 // √π
	maxCodeLen = 20
	groupSize  = 50 // symbols coded with one table before the next selector
	maxGroups  = 6
	runA, runB = 0, 1
)

// format returns ErrFormat with detail.
func format(detail string) error { return &formatError{detail} }

type formatError struct{ detail string }

func (e *formatError) Error() string { return "bzip2: invalid data: " + e.detail }
func (e *formatError) Is(target error) bool {
	return target == ErrFormat
}

// Decode decompresses the bzip2 stream at the start of src into dst and
// returns the number of bytes written, which is less than len(dst) when
// the stream is shorter. If the stream holds more than len(dst) bytes it
// returns ErrTooLarge. Bytes after the end of the stream are ignored.
//
// Decode does work proportional to len(src) + len(dst) and allocates
// about 5 bytes per byte of len(dst) (plus a few kilobytes), whatever src
// holds.
func Decode(dst, src []byte) (int, error) {
	var d decoder
	return d.decode(dst, src)
}

func (d *decoder) decode(dst, src []byte) (int, error) {
	if len(src) < 4 || string(src[:3]) != "BZh" || src[3] < '1' || src[3] > '9' {
		return 0, format("no bzip2 header")
	}
	d.br, d.blockMax = bitReader{src: src, pos: 4}, int(src[3]-'0')*100_000
	out, combined := 0, uint32(0)
	for {
		magic := uint64(d.br.bits(24))<<24 | uint64(d.br.bits(24))
		want := d.br.bits(32)
		if d.br.err != nil {
			return out, d.br.err
		}
		switch magic {
		case endMagic:
			if want != combined {
				return out, ErrChecksum
			}
			return out, nil
		case blockMagic:
		default:
			return out, format("bad block magic")
		}
		n, err := d.block(dst[out:])
		if err != nil {
			return out, err
		}
		if got := crc(dst[out : out+n]); got != want {
			return out, ErrChecksum
		}
		out += n
		combined = (combined<<1 | combined>>31) ^ want
	}
}

// decoder holds the state of one Decode call.
type decoder struct {
	br       bitReader
	blockMax int      // block size the header allows
	tt       []uint32 // the block, then the inverse transform's links
	sel      []uint8
	// incomplete is set when the code lengths of a table do not make a
	// complete prefix code: some bit strings are no code (or the lengths
	// over-fill the code space). Huffman's construction, which encoders
	// use, always gives a complete code. The reference
	// bzip2 reads such a table as this package does, refusing a bit
	// string that is no code; compress/bzip2 numbers its codes from the
	// longest down, which gives the same codes only for a complete code.
	incomplete bool
}

// block decodes one block (after its magic and CRC) into dst and returns
// its output length.
func (d *decoder) block(dst []byte) (int, error) {
	br := &d.br
	if br.bits(1) != 0 {
		return 0, format("randomized block")
	}
	origPtr := int(br.bits(24))

	// The byte values the block uses, as a 16x16 bitmap.
	var inUse [256]byte
	nInUse := 0
	ranges := br.bits(16)
	for i := range 16 {
		if ranges&(0x8000>>i) == 0 {
			continue
		}
		m := br.bits(16)
		for j := range 16 {
			if m&(0x8000>>j) != 0 {
				inUse[nInUse] = byte(i*16 + j)
				nInUse++
			}
		}
	}
	if nInUse == 0 {
		return 0, format("no symbols in use")
	}
	alphaSize := nInUse + 2 // RUNA, RUNB, MTF indexes 1..nInUse-1, end of block

	nGroups := int(br.bits(3))
	nSelectors := int(br.bits(15))
	if nGroups < 2 || nGroups > maxGroups || nSelectors == 0 {
		return 0, format("bad table counts")
	}
	if nSelectors > br.bitsLeft() { // each selector takes at least one bit
		return 0, format("truncated selectors")
	}
	if cap(d.sel) < nSelectors {
		d.sel = make([]uint8, nSelectors)
	}
	sel := d.sel[:nSelectors]
	mtfGroups := [maxGroups]uint8{0, 1, 2, 3, 4, 5}
	for i := range sel {
		j := 0
		for br.bits(1) == 1 {
			if j++; j >= nGroups {
				return 0, format("selector out of range")
			}
		}
		g := mtfGroups[j]
		copy(mtfGroups[1:j+1], mtfGroups[:j])
		mtfGroups[0] = g
		sel[i] = g
	}

	var tables [maxGroups]huffman
	var lengths [258]uint8
	for t := range nGroups {
		n := int(br.bits(5))
		for s := range alphaSize {
			for {
				if n < 1 || n > maxCodeLen {
					return 0, format("code length out of range")
				}
				if br.bits(1) == 0 {
					break
				}
				n += 1 - 2*int(br.bits(1)) // 0: longer, 1: shorter
			}
			lengths[s] = uint8(n)
		}
		if !tables[t].init(lengths[:alphaSize]) {
			d.incomplete = true
		}
	}
	if br.err != nil {
		return 0, br.err
	}

	// The block may not exceed its header's size, nor what dst can hold
	// once the run-length stage expands it: every 5 bytes of a block give
	// at least 4 of output.
	limit := min(d.blockMax, len(dst)+len(dst)/4+1)
	tooLong := func() error {
		if limit < d.blockMax {
			return ErrTooLarge
		}
		return format("block larger than its header allows")
	}
	if cap(d.tt) < limit {
		d.tt = make([]uint32, 0, limit)
	}
	tt := d.tt[:0]
	var count [256]int
	mtf := inUse
	run, weight := 0, 1
	endOfBlock := alphaSize - 1
	for i := 0; ; i++ {
		if i%groupSize == 0 && i/groupSize >= nSelectors {
			return 0, format("more symbols than selectors")
		}
		sym := tables[sel[i/groupSize]].decode(br)
		if br.err != nil {
			return 0, br.err
		}
		if sym < 0 {
			return 0, format("bad Huffman code")
		}
		if sym == runA || sym == runB {
			run += weight << sym
			weight <<= 1
			if run > limit-len(tt) {
				return 0, tooLong()
			}
			continue
		}
		if run > 0 {
			b := mtf[0]
			count[b] += run
			for ; run > 0; run-- {
				tt = append(tt, uint32(b))
			}
			weight = 1
		}
		if sym == endOfBlock {
			break
		}
		k := sym - 1
		b := mtf[k]
		copy(mtf[1:k+1], mtf[:k])
		mtf[0] = b
		if len(tt) >= limit {
			return 0, tooLong()
		}
		count[b]++
		tt = append(tt, uint32(b))
	}
	d.tt = tt
	if origPtr >= len(tt) {
		return 0, format("origin pointer out of range")
	}

	// Inverse Burrows-Wheeler transform: tt[i] keeps its byte in the low
	// 8 bits and gets the index of the byte that follows in the high 24.
	sum := 0
	for b, c := range count {
		count[b] = sum
		sum += c
	}
	for i, v := range tt {
		b := v & 0xFF
		tt[count[b]] |= uint32(i) << 8
		count[b]++
	}
	return unRLE(dst, tt, tt[origPtr]>>8)
}

// unRLE walks the transformed block from pos and undoes the initial
// run-length stage: after four equal bytes, the next byte counts further
// copies of it (0 to 255). It writes the output to dst.
func unRLE(dst []byte, tt []uint32, pos uint32) (int, error) {
	out, last, same := 0, -1, 0
	for range tt {
		pos = tt[pos]
		b := byte(pos)
		pos >>= 8
		if same == 4 {
			if int(b) > len(dst)-out {
				return out, ErrTooLarge
			}
			fill := dst[out : out+int(b)]
			for i := range fill {
				fill[i] = byte(last)
			}
			out += int(b)
			last, same = -1, 0
			continue
		}
		if int(b) == last {
			same++
		} else {
			last, same = int(b), 1
		}
		if out == len(dst) {
			return out, ErrTooLarge
		}
		dst[out] = b
		out++
	}
	return out, nil
}

// huffman decodes one canonical Huffman code: codes are assigned in
// order of length, and by symbol within a length.
type huffman struct {
	minLen int
	count  [maxCodeLen + 1]int32 // codes of each length
	first  [maxCodeLen + 1]int32 // first code of each length
	index  [maxCodeLen + 1]int32 // position in symbols of that first code
	symbol [258]uint16           // symbols by code
}

// init sets the code up from the code length of each symbol (1 to 20).
// It reports whether the lengths make a complete code, one where every
// bit string begins with a code (Kraft's sum is exactly 1).
func (h *huffman) init(lengths []uint8) (complete bool) {
	h.count = [maxCodeLen + 1]int32{}
	h.minLen = maxCodeLen
	kraft := 0 // in units of 2^-maxCodeLen
	for _, n := range lengths {
		h.count[n]++
		h.minLen = min(h.minLen, int(n))
		kraft += 1 << (maxCodeLen - n)
	}
	code, index := int32(0), int32(0)
	for n := 1; n <= maxCodeLen; n++ {
		h.first[n], h.index[n] = code, index
		code = (code + h.count[n]) << 1
		index += h.count[n]
	}
	next := h.index
	for s, n := range lengths {
		h.symbol[next[n]] = uint16(s)
		next[n]++
	}
	return kraft == 1<<maxCodeLen
}

// decode reads one symbol, or returns -1 for a bit string that is no
// code (possible when the lengths do not make a complete code).
func (h *huffman) decode(br *bitReader) int {
	code := int32(br.bits(uint(h.minLen)))
	for n := h.minLen; n <= maxCodeLen; n++ {
		if d := code - h.first[n]; d >= 0 && d < h.count[n] {
			return int(h.symbol[h.index[n]+d])
		}
		code = code<<1 | int32(br.bits(1))
	}
	return -1
}

// bitReader reads bits most significant first. After the input runs out
// it returns zeros and keeps err set.
type bitReader struct {
	src []byte
	pos int    // next byte of src
	acc uint64 // the last bits read, the unconsumed ones at the bottom
	n   uint   // unconsumed bits in acc
	err error
}

var errTruncated = format("truncated")

// bits reads k <= 32 bits.
func (br *bitReader) bits(k uint) uint32 {
	for br.n < k {
		if br.pos == len(br.src) {
			br.err = errTruncated
			return 0
		}
		br.acc = br.acc<<8 | uint64(br.src[br.pos])
		br.pos++
		br.n += 8
	}
	br.n -= k
	return uint32(br.acc>>br.n) & (1<<k - 1)
}

// bitsLeft is the number of bits not read yet.
func (br *bitReader) bitsLeft() int { return 8*(len(br.src)-br.pos) + int(br.n) }

// crcTable is the table of bzip2's CRC-32: polynomial 0x04C11DB7, most
// significant bit first (hash/crc32 computes the bit-reversed variant).
var crcTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for range 8 {
			if c&(1<<31) != 0 {
				c = c<<1 ^ 0x04C11DB7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

func crc(b []byte) uint32 {
	c := ^uint32(0)
	for _, x := range b {
		c = crcTable[byte(c>>24)^x] ^ c<<8
	}
	return ^c
}
