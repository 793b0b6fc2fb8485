package bzip2

// Compress writes bzip2 streams. The standard library reads bzip2
// but does not write it, and the only writer a fake A2S server needs is
// one whose output every bzip2 reader accepts: old Source engines sent
// split replies compressed with bzip2, and a2stest plays them. So this
// encoder is plain rather than small: it does every stage of the format
// (run-length coding, the Burrows-Wheeler transform, move-to-front, the
// zero-run code and one Huffman table per block), but with no search for
// better tables, and it sorts rotations by prefix doubling, O(n log n),
// which suits the few kilobytes of a game server's reply.
//
// compress/bzip2, Decode and the reference bzip2 command read what
// Compress writes.

import (
	"slices"
)

const (
	// level is the block size digit of the stream header: 100,000 bytes,
	// more than a reply needs and the least memory for a reader.
	level = 1
	// maxBlock is the most run-length-coded bytes a block holds; readers
	// allocate level*100,000, and the reference encoder stops 19 short.
	maxBlock     = level*100000 - 19
	maxEncodeLen = 17 // the reference encoder's longest code; readers take 20
	tablesCount  = 2  // the format wants 2 to 6 tables; both are the same here
)

// Compress returns the bzip2 stream of src appended to dst.
func Compress(dst, src []byte) []byte {
	w := bitWriter{b: dst}
	w.bytes('B', 'Z', 'h', '0'+level)
	var combined uint32
	for len(src) > 0 {
		block, n := runLength(src)
		sum := crc(src[:n])
		combined = (combined<<1 | combined>>31) ^ sum
		writeBlock(&w, block, sum)
		src = src[n:]
	}
	w.bits(0x1772, 16) // end of stream: the digits of sqrt(pi)
	w.bits(0x45385090, 32)
	w.bits(combined, 32)
	return w.flush()
}

// runLength codes the start of src for one block: a run of 4 to 255 equal
// bytes becomes the 4 bytes and a count of the rest. It returns the coded
// block and how many bytes of src it holds.
func runLength(src []byte) (block []byte, n int) {
	for n < len(src) && len(block) <= maxBlock-5 {
		c, run := src[n], 1
		for n+run < len(src) && src[n+run] == c && run < 255 {
			run++
		}
		if run < 4 {
			block = append(block, src[n:n+run]...)
		} else {
			block = append(block, c, c, c, c, byte(run-4))
		}
		n += run
	}
	return block, n
}

// writeBlock writes one compressed block.
func writeBlock(w *bitWriter, block []byte, crc uint32) {
	last, origin := transform(block)
	syms, used, alphabet := moveToFront(last)

	w.bits(0x3141, 16) // block magic: the digits of pi
	w.bits(0x59265359, 32)
	w.bits(crc, 32)
	w.bits(0, 1) // not randomised
	w.bits(uint32(origin), 24)

	// The byte values used, as 16 ranges of 16.
	var ranges uint32
	for i := range 16 {
		if slices.Contains(used[i*16:i*16+16], true) {
			ranges |= 1 << (15 - i)
		}
	}
	w.bits(ranges, 16)
	for i := range 16 {
		if ranges&(1<<(15-i)) == 0 {
			continue
		}
		var bits uint32
		for j, u := range used[i*16 : i*16+16] {
			if u {
				bits |= 1 << (15 - j)
			}
		}
		w.bits(bits, 16)
	}

	// One table, written twice; every group of 50 symbols selects the
	// first (selector 0, move-to-front coded as a single 0 bit).
	freq := make([]int, alphabet)
	for _, s := range syms {
		freq[s]++
	}
	lengths := codeLengths(freq)
	codes := canonicalCodes(lengths)
	selectors := (len(syms) + groupSize - 1) / groupSize
	w.bits(tablesCount, 3)
	w.bits(uint32(selectors), 15)
	for range selectors {
		w.bits(0, 1)
	}
	for range tablesCount {
		cur := lengths[0]
		w.bits(uint32(cur), 5)
		for _, l := range lengths {
			for ; cur < l; cur++ {
				w.bits(2, 2) // 10: one longer
			}
			for ; cur > l; cur-- {
				w.bits(3, 2) // 11: one shorter
			}
			w.bits(0, 1)
		}
	}
	for _, s := range syms {
		w.bits(codes[s], uint(lengths[s]))
	}
}

// transform is the Burrows-Wheeler transform of block: the last byte of
// each of its rotations in sorted order, and where the unrotated block
// falls in that order.
func transform(block []byte) (last []byte, origin int) {
	n := len(block)
	order := make([]int32, n) // rotations, by where they start, sorted
	class := make([]int32, n) // class[i]: rank of rotation i by its first k bytes
	tmp := make([]int32, n)
	count := make([]int32, max(256, n))

	// Sort by the first byte.
	for _, c := range block {
		count[c]++
	}
	for i := 1; i < 256; i++ {
		count[i] += count[i-1]
	}
	for i := n - 1; i >= 0; i-- {
		count[block[i]]--
		order[count[block[i]]] = int32(i)
	}
	classes := int32(1)
	for j := 1; j < n; j++ {
		if block[order[j]] != block[order[j-1]] {
			classes++
		}
		class[order[j]] = classes - 1
	}
	// Prefix doubling: rotations sorted by their first k bytes, each
	// preceded by the k bytes before it, are sorted by those k bytes' class
	// with a stable counting sort, and are then sorted by their first 2k.
	// Rotations still equal after n bytes are equal for good (a periodic
	// block), and their order does not change the output.
	for k := 1; k < n && int(classes) < n; k *= 2 {
		for j, i := range order {
			tmp[j] = (i - int32(k) + int32(n)) % int32(n)
		}
		clear(count[:classes])
		for _, i := range tmp {
			count[class[i]]++
		}
		for c := int32(1); c < classes; c++ {
			count[c] += count[c-1]
		}
		for j := n - 1; j >= 0; j-- {
			i := tmp[j]
			count[class[i]]--
			order[count[class[i]]] = i
		}
		second := func(i int32) int32 { return class[(int(i)+k)%n] }
		tmp[order[0]], classes = 0, 1
		for j := 1; j < n; j++ {
			a, b := order[j-1], order[j]
			if class[a] != class[b] || second(a) != second(b) {
				classes++
			}
			tmp[b] = classes - 1
		}
		class, tmp = tmp, class
	}
	last = make([]byte, n)
	for j, i := range order {
		if i == 0 {
			origin = j
		}
		last[j] = block[(int(i)+n-1)%n]
	}
	return last, origin
}

// Symbols after move-to-front coding: runs of zeros are written in
// bijective base 2 with runA (1) and runB (2) (see bzip2.go); a
// move-to-front index m > 0 is m+1; endOfBlock closes the block.

// moveToFront codes the transformed block as symbols, and reports which
// byte values it uses and the size of its symbol alphabet.
func moveToFront(last []byte) (syms []uint16, used [256]bool, alphabet int) {
	for _, c := range last {
		used[c] = true
	}
	var list []byte // the used byte values, most recent first
	for c := range 256 {
		if used[c] {
			list = append(list, byte(c))
		}
	}
	alphabet = len(list) + 2
	zeros := 0
	flushZeros := func() {
		for ; zeros > 0; zeros = (zeros - 1) / 2 {
			if zeros&1 == 1 {
				syms = append(syms, runA)
			} else {
				syms = append(syms, runB)
			}
		}
	}
	for _, c := range last {
		m := slices.Index(list, c)
		if m == 0 {
			zeros++
			continue
		}
		flushZeros()
		syms = append(syms, uint16(m+1))
		copy(list[1:m+1], list[:m])
		list[0] = c
	}
	flushZeros()
	syms = append(syms, uint16(alphabet-1)) // end of block
	return syms, used, alphabet
}

// codeLengths returns Huffman code lengths of at most maxEncodeLen bits for
// symbols of the given frequencies. Every symbol gets a code, as the
// format wants: an unused one counts as used once.
func codeLengths(freq []int) []uint8 {
	weights := make([]int, len(freq))
	for i, f := range freq {
		weights[i] = f + 1
	}
	for {
		lengths := treeDepths(weights)
		if slices.Max(lengths) <= maxEncodeLen {
			return lengths
		}
		// Too deep: flatten the weights and try again, as the reference
		// encoder does.
		for i, w := range weights {
			weights[i] = w/2 + 1
		}
	}
}

// treeDepths returns the depths of the leaves of a Huffman tree built on
// weights (at least two).
func treeDepths(weights []int) []uint8 {
	type node struct {
		weight int
		parent int // index in nodes; -1 for the root
	}
	nodes := make([]node, 0, 2*len(weights))
	var queue []int // indexes of the nodes without a parent yet
	for _, w := range weights {
		queue = append(queue, len(nodes))
		nodes = append(nodes, node{weight: w, parent: -1})
	}
	// lightest takes the lightest node off the queue: a scan, as there are
	// at most 258 symbols.
	lightest := func() int {
		lo := 0
		for j, n := range queue {
			if nodes[n].weight < nodes[queue[lo]].weight {
				lo = j
			}
		}
		n := queue[lo]
		queue[lo] = queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		return n
	}
	for len(queue) > 1 {
		a, b := lightest(), lightest()
		nodes[a].parent, nodes[b].parent = len(nodes), len(nodes)
		queue = append(queue, len(nodes))
		nodes = append(nodes, node{weight: nodes[a].weight + nodes[b].weight, parent: -1})
	}
	lengths := make([]uint8, len(weights))
	for i := range weights {
		for p := nodes[i].parent; p >= 0; p = nodes[p].parent {
			lengths[i]++
		}
	}
	return lengths
}

// canonicalCodes assigns the codes readers derive from the lengths:
// shorter codes first, and in symbol order within a length.
func canonicalCodes(lengths []uint8) []uint32 {
	codes := make([]uint32, len(lengths))
	var code uint32
	for l := uint8(1); l <= maxEncodeLen; l++ {
		for s, sl := range lengths {
			if sl == l {
				codes[s] = code
				code++
			}
		}
		code <<= 1
	}
	return codes
}

// bitWriter appends bits to a byte slice, most significant first.
type bitWriter struct {
	b    []byte
	acc  uint64 // pending bits, in the low n
	nacc uint
}

func (w *bitWriter) bits(v uint32, n uint) {
	w.acc = w.acc<<n | uint64(v)&(1<<n-1)
	w.nacc += n
	for w.nacc >= 8 {
		w.nacc -= 8
		w.b = append(w.b, byte(w.acc>>w.nacc))
	}
}

func (w *bitWriter) bytes(bs ...byte) {
	for _, c := range bs {
		w.bits(uint32(c), 8)
	}
}

// flush pads the last byte with zeros and returns the stream.
func (w *bitWriter) flush() []byte {
	if w.nacc > 0 {
		w.b = append(w.b, byte(w.acc<<(8-w.nacc)))
		w.nacc = 0
	}
	return w.b
}
