package a2stest

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsnet/compress/bzip2"
	"github.com/gsq-project/gsq/a2s"
)

// Source split header sizes: -2, ID, total, number (10 bytes), then the
// Size field that the 2006-era compressed layout leaves out.
const (
	noSizeHeaderLen = 10
	sizeFieldLen    = 2
	defaultSplit    = a2s.DefaultSplitSize
	reorderDelay    = 20 * time.Millisecond
)

// Wrap returns h with p's reply quirks: the framing of long replies and,
// with GoldSourceDual, an 'm' INFO reply made from each 'I' one and sent
// before it; with Banned, an 'l' reply to every query. With the default
// framing and neither it returns h.
func (p Profile) Wrap(h a2s.Handler) a2s.Handler {
	if p.Framing == FramingSource || p.Framing == FramingGoldSource {
		if !p.GoldSourceDual && p.Banned == nil {
			return h
		}
	}
	return &quirkHandler{p: p, h: h}
}

// quirkHandler applies a profile's reply quirks to a handler.
type quirkHandler struct {
	p       Profile
	h       a2s.Handler
	splitID atomic.Uint32
}

func (q *quirkHandler) ServeA2S(w a2s.ResponseWriter, r *a2s.Request) {
	if q.p.Banned != nil {
		if b, err := a2s.AppendBanned(nil, q.p.Banned); err == nil {
			_ = w.WriteDatagram(b)
		}
		return
	}
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
		frags, err := compressedFragments(qw.q.nextID(), payload, size)
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

// compressedFragments compresses payload with bzip2 and cuts it into
// Source fragments without the Size field; the first carries the
// decompressed size and CRC32, and the ID has bit 31 set.
func compressedFragments(id uint32, payload []byte, size int) ([][]byte, error) {
	var z bytes.Buffer
	zw, err := bzip2.NewWriter(&z, &bzip2.WriterConfig{Level: bzip2.BestCompression})
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(payload); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	data := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))
	data = binary.LittleEndian.AppendUint32(data, crc32.ChecksumIEEE(payload))
	data = append(data, z.Bytes()...)
	total := (len(data) + size - 1) / size
	var frags [][]byte
	for n := range total {
		chunk := data[n*size : min((n+1)*size, len(data))]
		f := binary.LittleEndian.AppendUint32(nil, a2s.HeaderSplit)
		f = binary.LittleEndian.AppendUint32(f, id|0x80000000)
		f = append(f, byte(total), byte(n))
		frags = append(frags, append(f, chunk...))
	}
	return frags, nil
}

// WrapWriter returns w with p's lossy knobs: datagrams are dropped,
// duplicated or held back and sent after the next one, as decided by a
// generator seeded with Seed. Without knobs it returns w.
func (p Profile) WrapWriter(w a2s.PacketWriter) a2s.PacketWriter {
	if p.Loss <= 0 && p.Duplicate <= 0 && p.Reorder <= 0 {
		return w
	}
	return &lossyWriter{w: w, p: p, rng: rand.New(rand.NewPCG(p.Seed, p.Seed^0x9E3779B97F4A7C15))}
}

// lossyWriter drops, duplicates and reorders datagrams.
type lossyWriter struct {
	w   a2s.PacketWriter
	p   Profile
	mu  sync.Mutex
	rng *rand.Rand

	held   []byte // a datagram held back, sent after the next one
	heldTo netip.AddrPort
	timer  *time.Timer
}

func (l *lossyWriter) WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rng.Float64() < l.p.Loss {
		return len(b), nil
	}
	copies := 1
	if l.rng.Float64() < l.p.Duplicate {
		copies = 2
	}
	if l.held == nil && l.rng.Float64() < l.p.Reorder {
		l.held, l.heldTo = append([]byte(nil), b...), to
		if l.timer == nil {
			l.timer = time.AfterFunc(reorderDelay, l.flush)
		} else {
			l.timer.Reset(reorderDelay)
		}
		return len(b), nil
	}
	var err error
	for range copies {
		_, err = l.w.WriteToUDPAddrPort(b, to)
	}
	l.flushLocked()
	return len(b), err
}

func (l *lossyWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
}

func (l *lossyWriter) flushLocked() {
	if l.held == nil {
		return
	}
	_, _ = l.w.WriteToUDPAddrPort(l.held, l.heldTo) // late datagram; errors (closed socket) don't matter
	l.held = nil
	l.timer.Stop()
}
