package rcontest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/gsq-project/gsq/rcon"
)

// DefaultRawTimeout bounds every read of a [RawConn] whose Timeout is zero.
const DefaultRawTimeout = 5 * time.Second

// RawConn is a bare RCON connection for driving a server packet by packet
// in tests: it writes exactly the bytes it is given and reads one packet
// at a time, with no login logic and no end-of-response detection.
type RawConn struct {
	// Timeout bounds each ReadPacket; zero means DefaultRawTimeout.
	Timeout time.Duration
	nc      net.Conn
	rd      *rcon.Reader
}

// DialRaw connects to addr over TCP.
func DialRaw(ctx context.Context, addr string) (*RawConn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("rcontest: %w", err)
	}
	return &RawConn{nc: nc, rd: rcon.NewReader(nc, 0)}, nil
}

// NetConn returns the underlying connection.
func (c *RawConn) NetConn() net.Conn { return c.nc }

// Close closes the connection.
func (c *RawConn) Close() error { return c.nc.Close() }

// Send writes the packets in one write, so they may arrive coalesced.
func (c *RawConn) Send(pkts ...rcon.Packet) error {
	return c.SendPieces(nil, pkts...)
}

// SendPieces writes the packets cut into pieces of the given sizes
// (cycled), each written separately a few milliseconds apart; {1} sends
// byte by byte, splitting every size word.
func (c *RawConn) SendPieces(sizes []int, pkts ...rcon.Packet) error {
	var b []byte
	for _, p := range pkts {
		var err error
		if b, err = p.AppendBinary(b); err != nil {
			return err
		}
	}
	return writePieces(c.nc, b, sizes, time.Millisecond)
}

// ReadPacket reads the next packet, waiting at most Timeout.
func (c *RawConn) ReadPacket() (rcon.Packet, error) {
	d := c.Timeout
	if d <= 0 {
		d = DefaultRawTimeout
	}
	if err := c.nc.SetReadDeadline(time.Now().Add(d)); err != nil {
		return rcon.Packet{}, err
	}
	return c.rd.ReadPacket()
}

// errLoginFailed is what Login returns for an id -1 answer; it matches
// rcon.ErrAuthFailed.
var errLoginFailed = fmt.Errorf("rcontest: login: %w", rcon.ErrAuthFailed)

// Login sends SERVERDATA_AUTH with id and reads up to the AUTH_RESPONSE,
// skipping one leading RESPONSE_VALUE. It returns an error matching
// rcon.ErrAuthFailed for id -1.
func (c *RawConn) Login(id int32, password string) error {
	if err := c.Send(rcon.Packet{ID: id, Type: rcon.TypeAuth, Body: []byte(password)}); err != nil {
		return err
	}
	for range 2 {
		p, err := c.ReadPacket()
		if err != nil {
			return err
		}
		if p.Type != rcon.TypeAuthResponse {
			continue
		}
		if p.ID == -1 {
			return errLoginFailed
		}
		return nil
	}
	return errors.New("rcontest: login: no AUTH_RESPONSE after two packets")
}
