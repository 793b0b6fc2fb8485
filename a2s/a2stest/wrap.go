package a2stest

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/internal/bzip2"
	"github.com/gsq-project/gsq/internal/lossy"
)

// Source split header sizes: -2, ID, total, number (10 bytes), then the
// Size field that the 2006-era compressed layout leaves out.
const (
	noSizeHeaderLen = 10
	sizeFieldLen    = 2
	defaultSplit    = a2s.DefaultSplitSize
)

// wrap returns h with p's reply quirks: the framing of long replies and,
// with GoldSourceDual, an 'm' INFO reply made from each 'I' one and sent
// before it. With the default framing and no dual reply it returns h.
func (p Profile) wrap(h a2s.Handler) a2s.Handler {
	if (p.Framing == FramingSource || p.Framing == FramingGoldSource) && !p.GoldSourceDual {
		return h
	}
	return &quirkHandler{p: p, h: h}
}

// quirkHandler applies a profile's reply quirks to a handler.
type quirkHandler struct {
	p       Profile
	h       a2s.Handler
	splitID atomic.Uint32

	mu             sync.Mutex // guards the last compression, reused while the reply is the same
	lastPayload    []byte
	lastCompressed []byte
}

func (q *quirkHandler) ServeA2S(w a2s.ResponseWriter, r *a2s.Request) {
	q.h.ServeA2S(&quirkWriter{q: q, w: w}, r)
}

// quirkWriter is the ResponseWriter the wrapped handler writes to.
type quirkWriter struct {
	q *quirkHandler
	w a2s.ResponseWriter
}

func (qw *quirkWriter) RemoteAddr() netip.AddrPort   { return qw.w.RemoteAddr() }
func (qw *quirkWriter) WriteDatagram(b []byte) error { return qw.w.WriteDatagram(b) }

func (qw *quirkWriter) Write(payload []byte) error {
	p := qw.q.p
	if p.GoldSourceDual && len(payload) > 4 && payload[4] == a2s.TypeInfoReply {
		if m, err := goldSourceReply(payload); err == nil {
			if err := qw.frame(m); err != nil {
				return err
			}
		}
	}
	return qw.frame(payload)
}

// frame sends one whole reply in the profile's framing.
func (qw *quirkWriter) frame(payload []byte) error {
	p := qw.q.p
	size := p.SplitSize
	if size <= 0 {
		size = defaultSplit
	}
	switch p.Framing {
	case FramingUnsplit:
		return qw.w.WriteDatagram(payload)
	case FramingReversed:
		if len(payload) <= size+noSizeHeaderLen+sizeFieldLen {
			return qw.w.WriteDatagram(payload)
		}
		frags, err := a2s.SplitWriter{Format: a2s.SplitSource, Size: size}.AppendFragments(nil, qw.q.nextID(), payload)
		if err != nil {
			return err
		}
		for i := len(frags) - 1; i >= 0; i-- {
			if err := qw.w.WriteDatagram(frags[i]); err != nil {
				return err
			}
		}
		return nil
	case FramingBzip2NoSize:
		if len(payload) <= size+noSizeHeaderLen+sizeFieldLen {
			return qw.w.WriteDatagram(payload)
		}
		frags, err := compressedFragments(qw.q.nextID(), payload, qw.q.compress(payload), size)
		if err != nil {
			return err
		}
		for _, f := range frags {
			if err := qw.w.WriteDatagram(f); err != nil {
				return err
			}
		}
		return nil
	}
	return qw.w.Write(payload)
}

func (q *quirkHandler) nextID() uint32 { return q.splitID.Add(1) & 0x7FFFFFFF }

// compress returns the bzip2 stream of payload. The last one is kept,
// since a fake server sends the same reply again and again.
func (q *quirkHandler) compress(payload []byte) []byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.lastCompressed == nil || !bytes.Equal(payload, q.lastPayload) {
		q.lastCompressed = bzip2.Compress(nil, payload)
		q.lastPayload = append(q.lastPayload[:0], payload...)
	}
	return q.lastCompressed
}

// goldSourceReply turns an encoded 'I' reply into the equivalent 'm' one.
func goldSourceReply(payload []byte) ([]byte, error) {
	info, err := a2s.ParseInfo(payload)
	if err != nil {
		return nil, err
	}
	info.Format = a2s.TypeInfoReplyGoldSource
	if len(info.Address) == 0 {
		info.Address = a2s.Text(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), info.Port).String())
	}
	return info.AppendBinary(nil)
}

// compressedFragments cuts the bzip2 stream z of payload into Source
// fragments without the Size field, the 2006-era layout. Fragment 0 also
// carries the decompressed size and CRC32, so it has room for 8 fewer
// bytes of z than the others.
func compressedFragments(id uint32, payload, z []byte, size int) ([][]byte, error) {
	const sizeAndCRC = 8
	total := (sizeAndCRC + len(z) + size - 1) / size
	if total > 255 {
		return nil, fmt.Errorf("a2stest: a %d-byte compressed reply needs %d fragments of %d bytes", len(z), total, size)
	}
	crc := crc32.ChecksumIEEE(payload)
	var frags [][]byte
	for n, start := 0, 0; n < total; n++ {
		end := min(start+size, len(z))
		if n == 0 {
			end = min(size-sizeAndCRC, len(z))
		}
		f := a2s.Fragment{ID: id, Total: uint8(total), Number: uint8(n), Compressed: true,
			DecompressedSize: uint32(len(payload)), CRC: crc,
			Payload: z[start:end], Format: a2s.SplitSourceNoSize}
		b, err := f.AppendBinary(nil)
		if err != nil {
			return nil, err
		}
		frags, start = append(frags, b), end
	}
	return frags, nil
}

// WrapWriter returns w with p's lossy knobs: datagrams are dropped,
// duplicated or held back and sent after the next one (or 20 ms later), as
// decided by a generator seeded with Seed. Without knobs it returns w.
func (p Profile) WrapWriter(w a2s.PacketWriter) a2s.PacketWriter {
	c := p.lossy()
	if !c.Enabled() {
		return w
	}
	return lossy.New(w, c)
}
