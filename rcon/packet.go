package rcon

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync/atomic"

	"github.com/gsq-project/gsq/internal/wire"
)

// PacketType is the type field of an RCON packet.
type PacketType int32

// Packet types, as named on the Valve Developer Community page "Source
// RCON Protocol". The value 2 means EXECCOMMAND from client to server and
// AUTH_RESPONSE from server to client; the direction decides. Types 1, 4
// and 5 are not Valve's: Squad pushes chat as type 1, and Rust's legacy
// RCON pushes console lines as type 4 and switches a connection to UTF-8
// when the client sends type 5.
const (
	TypeResponseValue PacketType = 0 // SERVERDATA_RESPONSE_VALUE
	TypeChatValue     PacketType = 1 // unsolicited chat line (Squad)
	TypeExecCommand   PacketType = 2 // SERVERDATA_EXECCOMMAND
	TypeAuthResponse  PacketType = 2 // SERVERDATA_AUTH_RESPONSE
	TypeAuth          PacketType = 3 // SERVERDATA_AUTH
	TypeRustConsole   PacketType = 4 // unsolicited console line (legacy Rust RCON)
	TypeRustUTF8      PacketType = 5 // client to legacy Rust: send text as UTF-8 from now on
)

// String returns the Valve name of the type.
func (t PacketType) String() string {
	switch t {
	case TypeResponseValue:
		return "SERVERDATA_RESPONSE_VALUE"
	case TypeChatValue:
		return "SERVERDATA_CHAT_VALUE"
	case TypeExecCommand:
		return "SERVERDATA_EXECCOMMAND/AUTH_RESPONSE"
	case TypeAuth:
		return "SERVERDATA_AUTH"
	case TypeRustConsole:
		return "RUST_CONSOLE"
	case TypeRustUTF8:
		return "RUST_UTF8"
	}
	return fmt.Sprintf("PacketType(%d)", int32(t))
}

const (
	// MinPacketSize is the smallest legal size field: id, type and the
	// two terminating NULs.
	MinPacketSize = 10
	// DefaultMaxPacketSize is the default limit on the size field. It is
	// deliberately far above Valve's 4096: vanilla Minecraft cuts output
	// every 4096 UTF-16 units, which can take ~12 KiB of UTF-8, and CS2
	// answers with one packet however long the output is.
	DefaultMaxPacketSize = 4 << 20
)

// Packet is one RCON packet.
type Packet struct {
	ID   int32
	Type PacketType
	Body []byte // without the two terminating NULs; may itself hold NULs
}

// Size is the value of the packet's size field: the byte count after it.
func (p Packet) Size() int { return len(p.Body) + MinPacketSize }

// Len is the number of bytes the packet takes on the wire.
func (p Packet) Len() int { return p.Size() + 4 }

// AppendBinary appends the wire form of p to b: size (int32 LE,
// back-patched), id, type, body, NUL, NUL. It implements
// encoding.BinaryAppender. The whole packet is built in one buffer so it
// can go out in a single Write. It fails only when the body is too long
// for the int32 size field.
func (p Packet) AppendBinary(b []byte) ([]byte, error) {
	if len(p.Body) > math.MaxInt32-MinPacketSize {
		return b, &SizeError{Size: len(p.Body) + MinPacketSize, Max: math.MaxInt32}
	}
	start := len(b)
	b = wire.AppendInt32(b, 0) // patched below
	b = wire.AppendInt32(b, p.ID)
	b = wire.AppendInt32(b, int32(p.Type))
	b = append(b, p.Body...)
	b = append(b, 0, 0)
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b, nil
}

// MarshalBinary returns the wire form of p.
func (p Packet) MarshalBinary() ([]byte, error) {
	return p.AppendBinary(make([]byte, 0, p.Len()))
}

// ParsePacket decodes the packet at the start of b. max limits the size
// field (max <= 0 means [DefaultMaxPacketSize]). It returns the packet
// and the number of bytes consumed. If b ends inside the packet the error
// matches [ErrTruncated] and more input is needed. The body aliases b.
//
// Padding is tolerated: up to two trailing NULs inside the declared size
// are removed, missing ones are not required, and NULs before them stay
// in the body.
func ParsePacket(b []byte, max int) (p Packet, n int, err error) {
	r := wire.NewReader(b)
	size32, err := r.Int32()
	if err != nil {
		return Packet{}, 0, &ParseError{Offset: len(b), Err: ErrTruncated}
	}
	size, err := checkSize(size32, max)
	if err != nil {
		return Packet{}, 0, err
	}
	payload, err := r.Bytes(size)
	if err != nil {
		return Packet{}, 0, &ParseError{Offset: len(b), Err: ErrTruncated}
	}
	return decodePayload(payload), 4 + size, nil
}

func checkSize(size32 int32, max int) (int, error) {
	if max <= 0 {
		max = DefaultMaxPacketSize
	}
	size := int(size32)
	if size < MinPacketSize || size > max {
		return 0, &ParseError{Offset: 0, Err: &SizeError{Size: size, Max: max}}
	}
	return size, nil
}

// decodePayload splits the bytes after the size field (len >= 10) into
// id, type and body, dropping at most two trailing NULs.
func decodePayload(payload []byte) Packet {
	r := wire.NewReader(payload)
	id, _ := r.Int32()
	typ, _ := r.Int32()
	body := r.Rest()
	for i := 0; i < 2 && len(body) > 0 && body[len(body)-1] == 0; i++ {
		body = body[:len(body)-1]
	}
	return Packet{ID: id, Type: PacketType(typ), Body: body}
}

// Reader reads packets from a byte stream, framing them with
// io.ReadFull, so packets split across or coalesced within TCP segments
// are handled. It buffers its input. Every packet gets a freshly
// allocated body that the caller may keep.
//
// A read interrupted by a timeout (a deadline on a net.Conn) can be
// resumed: the bytes of the packet read so far are kept, and the next
// ReadPacket carries on from there. That lets a reader be interrupted
// at any moment without losing its place in the stream.
type Reader struct {
	br  *bufio.Reader
	max int

	hdr     [4]byte
	hdrN    int          // bytes of hdr read so far
	payload []byte       // the packet being read once its size is known
	payN    int          // bytes of payload read so far
	scratch []byte       // reused for payloads that are not buffered whole
	skip    []byte       // bytes to discard first if the stream holds them next
	partial atomic.Int64 // bytes of packets read in pieces so far, ever

	debug func(b []byte) // sees the wire bytes of each packet read
}

// clientBufferSize is the input buffer of a client connection's Reader:
// a whole SRCDS fragment (4106 bytes on the wire) and then some, so most
// packets are parsed where they lie.
const clientBufferSize = 16 << 10

// NewReader returns a Reader on r that rejects size fields above max
// (max <= 0 means [DefaultMaxPacketSize]). If r is a *bufio.Reader of at
// least the default size, the Reader reads through it, so what it
// buffers stays visible to the caller.
func NewReader(r io.Reader, max int) *Reader {
	return newReaderSize(r, max, 0)
}

// newReaderSize is NewReader with an input buffer of size bytes (0: the
// bufio default).
func newReaderSize(r io.Reader, max, size int) *Reader {
	if max <= 0 {
		max = DefaultMaxPacketSize
	}
	var br *bufio.Reader
	if size > 0 {
		br = bufio.NewReaderSize(r, size)
	} else {
		br = bufio.NewReader(r)
	}
	return &Reader{br: br, max: max}
}

// ReadPacket reads the next packet. It returns io.EOF if the stream ends
// cleanly between packets, a [*ParseError] matching [ErrTruncated] if it
// ends inside one, a [*ParseError] holding a [*SizeError] for a size
// field out of range (nothing is allocated then), and I/O errors as they
// come. After a timeout the read can be resumed (see [Reader]); after
// any other error the stream position is undefined: discard the Reader.
func (r *Reader) ReadPacket() (Packet, error) {
	p, err := r.next()
	if err == nil {
		p.Body = bytes.Clone(p.Body)
		if p.Body == nil {
			p.Body = []byte{}
		}
	}
	return p, err
}

// next reads the next packet as ReadPacket does, but its body is only
// valid until the next call: it lies in the input buffer when the whole
// packet was buffered, else in a scratch buffer the Reader reuses.
func (r *Reader) next() (Packet, error) {
	if r.skip != nil {
		if err := r.skipPrefix(); err != nil {
			return Packet{}, truncated(err, 0)
		}
	}
	if r.hdrN == 0 && r.payload == nil {
		if p, ok, err := r.buffered(); ok || err != nil {
			return p, err
		}
	}
	if r.payload == nil {
		n, err := io.ReadFull(r.br, r.hdr[r.hdrN:])
		r.hdrN += n
		r.partial.Add(int64(n))
		if err != nil {
			return Packet{}, truncated(err, r.hdrN)
		}
		hr := wire.NewReader(r.hdr[:])
		size32, _ := hr.Int32()
		size, err := checkSize(size32, r.max)
		if err != nil {
			return Packet{}, err
		}
		if cap(r.scratch) < size {
			r.scratch = make([]byte, size)
		}
		r.payload = r.scratch[:size]
	}
	n, err := io.ReadFull(r.br, r.payload[r.payN:])
	r.payN += n
	r.partial.Add(int64(n))
	if err != nil {
		return Packet{}, truncated(err, 4+r.payN)
	}
	if r.debug != nil {
		r.debug(append(r.hdr[:], r.payload...))
	}
	p := decodePayload(r.payload)
	r.hdrN, r.payload, r.payN = 0, nil, 0
	if cap(r.scratch) > maxKeptScratch {
		r.scratch = nil
	}
	return p, nil
}

// buffered parses the next packet where it lies if the input buffer holds
// all of it, without reading. ok reports whether it did; a size field out
// of range is an error either way.
func (r *Reader) buffered() (p Packet, ok bool, err error) {
	n := r.br.Buffered()
	if n < 4 {
		return Packet{}, false, nil
	}
	hdr, _ := r.br.Peek(4)
	size, err := checkSize(int32(binary.LittleEndian.Uint32(hdr)), r.max)
	if err != nil {
		return Packet{}, false, err
	}
	if 4+size > n {
		return Packet{}, false, nil
	}
	b, _ := r.br.Peek(4 + size)
	if r.debug != nil {
		r.debug(b)
	}
	p = decodePayload(b[4:])
	_, _ = r.br.Discard(4 + size) // b stays valid until the next read
	return p, true, nil
}

// atBoundary reports whether the Reader stands between two packets.
func (r *Reader) atBoundary() bool { return r.hdrN == 0 && r.payload == nil }

// progress counts the bytes of packets read in pieces, so that a caller
// whose read timed out can tell whether anything arrived meanwhile.
func (r *Reader) progress() int64 { return r.partial.Load() }

// wholePacketBuffered reports whether the input buffer holds a whole
// packet, so reading it will not block.
func (r *Reader) wholePacketBuffered() bool {
	if r.hdrN != 0 || r.payload != nil {
		return false
	}
	return packetBuffered(r.br)
}

// packetBuffered reports whether br holds a whole packet, so reading it
// will not block. It never reads.
func packetBuffered(br *bufio.Reader) bool {
	n := br.Buffered()
	if n < 4 {
		return false
	}
	hdr, _ := br.Peek(4)
	return int64(int32(binary.LittleEndian.Uint32(hdr))) <= int64(n-4)
}

// skipNext makes the next ReadPacket first discard prefix if the stream
// holds exactly those bytes next (Squad's stray tail, see squadTail).
// Waiting for them is part of that ReadPacket, and so can be resumed.
func (r *Reader) skipNext(prefix []byte) {
	r.skip = prefix
}

// skipPrefix discards r.skip if the stream starts with it. It keeps
// r.skip after a timeout, so that the next call looks again.
func (r *Reader) skipPrefix() error {
	b, err := r.br.Peek(len(r.skip))
	if err != nil && len(b) < len(r.skip) {
		if isTimeoutErr(err) {
			return err
		}
		r.skip = nil // the stream ended: let the read report it
		return nil
	}
	if string(b) == string(r.skip) {
		_, _ = r.br.Discard(len(r.skip))
	}
	r.skip = nil
	return nil
}

// truncated maps an end of stream after n bytes of a packet to the
// package's errors; other I/O errors pass through.
func truncated(err error, n int) error {
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return io.EOF
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &ParseError{Offset: n, Err: ErrTruncated}
	}
	return err
}
