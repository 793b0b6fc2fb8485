package rconbench

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"
)

// leanClient is the reference the side-by-side measures our client
// against: it frames, writes and reads, and nothing else. One packet
// out, one packet back, with no end-of-answer detection, no deadlines,
// no goroutines and one allocation per round trip, the output it returns
// as a string. It is what a client costs when it does the least any
// client must do.
type leanClient struct {
	nc  net.Conn
	br  *bufio.Reader
	req []byte // the request, its id patched per call
	hdr [4]byte
	buf []byte
	id  int32
	// probe, if set, also writes an empty RESPONSE_VALUE in the same
	// Write and reads until the extra packet SRCDS sends after the
	// probe's mirror: Valve's end-of-answer workaround, done leanly.
	probe bool
}

func dialLean(addr, password, cmd string, probe bool) (*leanClient, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &leanClient{nc: nc, br: bufio.NewReaderSize(nc, 64<<10), buf: make([]byte, 4096), probe: probe}
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Write(leanPacket(nil, 1, 3, password)); err != nil {
		return nil, err
	}
	for { // skip SRCDS's empty RESPONSE_VALUE, stop at AUTH_RESPONSE
		id, typ, _, err := c.read()
		if err != nil {
			return nil, err
		}
		if typ == 2 {
			if id != 1 {
				return nil, fmt.Errorf("login refused (id %d)", id)
			}
			break
		}
	}
	_ = nc.SetDeadline(time.Time{})
	c.req = leanPacket(nil, 0, 2, cmd)
	if probe {
		c.req = leanPacket(c.req, 0, 0, "")
	}
	c.id = 1
	return c, nil
}

// leanPacket appends a packet to b.
func leanPacket(b []byte, id, typ int32, body string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(body)+10))
	b = binary.LittleEndian.AppendUint32(b, uint32(id))
	b = binary.LittleEndian.AppendUint32(b, uint32(typ))
	b = append(b, body...)
	return append(b, 0, 0)
}

// read reads one packet; body aliases c.buf.
func (c *leanClient) read() (id, typ int32, body []byte, err error) {
	if _, err = io.ReadFull(c.br, c.hdr[:]); err != nil {
		return
	}
	n := int(binary.LittleEndian.Uint32(c.hdr[:]))
	if n < 10 || n > len(c.buf) {
		return 0, 0, nil, fmt.Errorf("size %d", n)
	}
	if _, err = io.ReadFull(c.br, c.buf[:n]); err != nil {
		return
	}
	return int32(binary.LittleEndian.Uint32(c.buf)), int32(binary.LittleEndian.Uint32(c.buf[4:])), c.buf[8 : n-2], nil
}

// exec runs the command and returns its output.
func (c *leanClient) exec() (string, error) {
	c.id += 2
	binary.LittleEndian.PutUint32(c.req[4:], uint32(c.id))
	if c.probe {
		binary.LittleEndian.PutUint32(c.req[len(c.req)-10:], uint32(c.id+1))
	}
	if _, err := c.nc.Write(c.req); err != nil {
		return "", err
	}
	out := ""
	for {
		id, _, body, err := c.read()
		if err != nil {
			return out, err
		}
		switch {
		case id == c.id:
			out += string(body)
			if !c.probe {
				return out, nil
			}
		case id == c.id+1 && len(body) > 0: // the extra packet after the mirror
			return out, nil
		}
	}
}

func (c *leanClient) Close() error { return c.nc.Close() }
