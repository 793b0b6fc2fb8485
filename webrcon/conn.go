package webrcon

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// wsConn is one WebSocket connection after the handshake: it reads whole
// messages (fragments joined, control frames handled between them) and
// writes one frame per message, masked from the client's side.
type wsConn struct {
	nc     net.Conn
	br     *bufio.Reader
	client bool // masks what it writes (RFC 6455 §5.3)
	maxMsg int
	// pong answers pings; Rust's server never does (MrGraversen/rust-rcon#1).
	pong  bool
	debug func(dir string, b []byte)

	wmu     sync.Mutex
	wbuf    []byte
	closing bool // a close frame was sent
	wdl     time.Duration
}

// ErrPeerClosed: the peer sent a close frame. A [*CloseError] says its
// code and reason.
var ErrPeerClosed = errors.New("webrcon: connection closed by the peer")

// CloseError is a close frame received (RFC 6455 §5.5.1). It matches
// [ErrPeerClosed].
type CloseError struct {
	Code   int // 1005 when the frame carries none
	Reason string
}

func (e *CloseError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("webrcon: closed by the peer (code %d)", e.Code)
	}
	return fmt.Sprintf("webrcon: closed by the peer (code %d: %s)", e.Code, e.Reason)
}

// Unwrap returns ErrPeerClosed.
func (e *CloseError) Unwrap() error { return ErrPeerClosed }

// readMessage returns the next text or binary message.
func (c *wsConn) readMessage() (Opcode, []byte, error) {
	var msg []byte
	op := Opcode(0)
	for {
		f, err := ReadFrame(c.br, c.maxMsg)
		if err != nil {
			return 0, nil, err
		}
		if c.debug != nil {
			c.debug("recv", f.Payload)
		}
		switch f.Op {
		case OpPing:
			if c.pong {
				c.write(OpPong, f.Payload)
			}
			continue
		case OpPong:
			continue
		case OpClose:
			ce := &CloseError{Code: 1005}
			if len(f.Payload) >= 2 {
				ce.Code = int(binary.BigEndian.Uint16(f.Payload))
				ce.Reason = string(f.Payload[2:])
			}
			c.close(1000)
			return 0, nil, ce
		case OpContinuation:
			if op == 0 {
				return 0, nil, &FrameError{Err: errors.New("continuation without a message")}
			}
		default:
			if op != 0 {
				return 0, nil, &FrameError{Err: errors.New("new message inside a fragmented one")}
			}
			op = f.Op
		}
		if len(msg)+len(f.Payload) > c.maxMsg {
			return 0, nil, &FrameError{Err: fmt.Errorf("%w: more than %d bytes", ErrMessageTooLarge, c.maxMsg)}
		}
		if msg == nil && f.Fin {
			msg = f.Payload
		} else {
			msg = append(msg, f.Payload...)
		}
		if f.Fin {
			return op, msg, nil
		}
	}
}

// write sends one frame, within the write timeout.
func (c *wsConn) write(op Opcode, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closing {
		return net.ErrClosed
	}
	return c.writeLocked(op, payload)
}

func (c *wsConn) writeLocked(op Opcode, payload []byte) error {
	f := Frame{Fin: true, Op: op, Payload: payload, Masked: c.client}
	if c.client {
		binary.LittleEndian.PutUint32(f.Key[:], rand.Uint32())
	}
	var err error
	c.wbuf, err = f.AppendBinary(c.wbuf[:0])
	if err != nil {
		return err
	}
	if c.debug != nil {
		c.debug("send", payload)
	}
	if c.wdl > 0 {
		c.nc.SetWriteDeadline(time.Now().Add(c.wdl))
	}
	_, err = c.nc.Write(c.wbuf)
	if cap(c.wbuf) > 64<<10 {
		c.wbuf = nil // keep no large buffer between messages
	}
	return err
}

// close sends a close frame with code, once, and closes the connection.
func (c *wsConn) close(code int) {
	c.wmu.Lock()
	if !c.closing {
		c.closing = true
		c.nc.SetWriteDeadline(time.Now().Add(time.Second))
		c.writeLocked(OpClose, binary.BigEndian.AppendUint16(nil, uint16(code)))
	}
	c.wmu.Unlock()
	c.nc.Close()
}
