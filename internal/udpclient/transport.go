package udpclient

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/internal/udpio"
	"github.com/gsq-project/gsq/internal/udpserve"
)

// Defaults of a [Config] left zero.
const (
	// DefaultReadBuffer is the SO_RCVBUF asked for a socket, so that
	// bursts of replies from many servers are not dropped by the kernel.
	DefaultReadBuffer = 4 << 20
	// DefaultReadBatch is how many datagrams one read may take.
	DefaultReadBatch = 32
	// MaxDatagram is the read buffer of one datagram: the largest UDP
	// payload, because Rust and Unreal games send unsplit replies far
	// beyond the 1400 bytes their specifications promise.
	MaxDatagram = 64 << 10
	// MaxReadErrors is how many read errors in a row (other than
	// timeouts) end the read loop, as they end a server's.
	MaxReadErrors = udpserve.MaxReadErrors
)

// Batching of the requests sent in reply, by the read loop and by a
// [Batch] (sendmmsg on Linux).
const (
	sendBatch = 64 // requests per system call
	sendBytes = 64 // the largest request batched; longer ones go alone
)

// Config says how a [Transport] opens its socket and reads it. The zero
// value opens a UDP socket on every interface, on a free port.
type Config struct {
	// Conn is a socket of the caller's; the Transport owns it from then
	// on, and Close closes it. If nil, Open opens one on LocalAddr.
	Conn net.PacketConn
	// LocalAddr is the address Open binds; the zero value binds every
	// interface on a free port.
	LocalAddr netip.AddrPort
	// Network is "udp" (the default), "udp4" or "udp6".
	Network string
	// ReadBuffer and WriteBuffer are the SO_RCVBUF and SO_SNDBUF asked for
	// the socket (the kernel caps them): zero means DefaultReadBuffer and
	// the system's default, a negative value the system's default.
	ReadBuffer, WriteBuffer int
	// ReadBatch is how many datagrams one read may take (recvmmsg(2) on
	// Linux); zero means DefaultReadBatch.
	ReadBatch int
	// Name is the package the Transport serves ("a2s"), which prefixes
	// its errors: "a2s: read: ...", "a2s: open socket: ...".
	Name string
	// ErrClosed is the error of the conversations that find the Transport
	// closed; it defaults to net.ErrClosed.
	ErrClosed error
	// Debug, if set, is called with every datagram sent ("send") and
	// received ("recv"), those from nobody included. It must not retain b.
	// Received datagrams are reported from the read loop: it should be
	// quick.
	Debug func(dir string, addr netip.AddrPort, b []byte)
	// Backlog, if set, is called by the read loop with true when a read
	// filled its batch (more datagrams are waiting: the loop is behind),
	// and with false when it finds nothing to read and waits.
	Backlog func(behind bool)
}

// Peer is what a [Transport] hands a server's datagrams and reports to:
// a conversation's driver. Its methods run on the read loop, or on the
// goroutine that flushes a [Batch], so they must be quick and must not
// call Attach or Detach. They may be called a little after the Peer is
// detached, by a read that found it attached: a Peer tells such late
// deliveries by their source, or by its own state.
type Peer interface {
	// HandleDatagram digests the datagram b that from sent, read at now.
	// b is valid until it returns. Requests sent in reply go into out,
	// which the read loop sends once the batch is digested.
	HandleDatagram(from netip.AddrPort, b []byte, now time.Time, out *Batch)
	// HandleUnreachable handles the network's report that the server is
	// unreachable: an ICMP error, as a [syscall.Errno] such as
	// ECONNREFUSED (a closed port). Linux reports them; elsewhere a
	// closed port looks silent.
	HandleUnreachable(from netip.AddrPort, err error)
	// HandleSendError handles a datagram to the server that the kernel
	// refused to send, from a Batch.
	HandleSendError(to netip.AddrPort, err error)
}

// Link is a Peer's place in a Transport's table of servers, kept by the
// caller so that attaching allocates nothing. The zero value is ready; a
// Link is attached to one server at a time.
type Link struct {
	peer Peer
	addr netip.AddrPort
	next *Link // the next Peer of the same server
}

// Transport is one UDP socket shared by the conversations with many
// servers: it reads every datagram, hands it to the peers attached to its
// source address, and sends requests, a batch at a time where it can.
// Open one with [Open]; it is safe for concurrent use.
type Transport struct {
	cfg    Config
	conn   net.PacketConn
	reader *udpio.Reader
	out    *Batch        // the read loop's: requests sent in reply
	done   chan struct{} // closed when the read loop has returned

	mu      sync.Mutex
	peers   map[netip.AddrPort]*Link
	closed  bool
	readErr error // why the read loop ended, when it did on its own

	stray     atomic.Int64
	exchanges sync.Pool // of *exchange
}

// Open opens cfg's socket (or takes cfg.Conn) and starts its read loop.
func Open(cfg Config) (*Transport, error) {
	if cfg.ErrClosed == nil {
		cfg.ErrClosed = net.ErrClosed
	}
	conn := cfg.Conn
	if conn == nil {
		network := cfg.Network
		if network == "" {
			network = "udp"
		}
		var laddr *net.UDPAddr
		if cfg.LocalAddr.IsValid() {
			laddr = net.UDPAddrFromAddrPort(cfg.LocalAddr)
		}
		uc, err := net.ListenUDP(network, laddr)
		if err != nil {
			return nil, fmt.Errorf("%s: open socket: %w", cfg.Name, err)
		}
		conn = uc
	}
	_ = conn.SetReadDeadline(time.Time{}) // the read loop waits for answers
	if uc, ok := conn.(*net.UDPConn); ok {
		// Best effort: the kernel caps the sizes, and a smaller buffer
		// only means more loss under load.
		if size := cmp.Or(cfg.ReadBuffer, DefaultReadBuffer); size > 0 {
			_ = uc.SetReadBuffer(size)
		}
		if cfg.WriteBuffer > 0 {
			_ = uc.SetWriteBuffer(cfg.WriteBuffer)
		}
	}
	t := &Transport{
		cfg:    cfg,
		conn:   conn,
		reader: udpio.NewReader(conn, MaxDatagram, cmp.Or(cfg.ReadBatch, DefaultReadBatch)),
		done:   make(chan struct{}),
		peers:  make(map[netip.AddrPort]*Link),
	}
	t.exchanges.New = newExchange
	t.out = t.NewBatch()
	// Reports are asked for before the first send, or the report about it
	// would be lost: a closed port then fails its conversation at once.
	t.reader.EnableReports()
	if cfg.Backlog != nil {
		t.reader.Idle = func() { cfg.Backlog(false) }
	}
	go t.loop()
	return t, nil
}

// Conn returns the socket.
func (t *Transport) Conn() net.PacketConn { return t.conn }

// Close closes the socket and waits for the read loop to return; the
// conversations waiting end with Config.ErrClosed. It is safe to call
// more than once.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		<-t.done
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	err := t.conn.Close()
	<-t.done
	return err
}

// Done is closed when the read loop has returned: the socket was closed,
// or failed MaxReadErrors times in a row. Err says which.
func (t *Transport) Done() <-chan struct{} { return t.done }

// Err returns nil while the Transport reads, Config.ErrClosed once it is
// closed, and the read error that ended its read loop otherwise.
func (t *Transport) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.errLocked()
}

func (t *Transport) errLocked() error {
	switch {
	case t.closed:
		return t.cfg.ErrClosed
	case t.readErr != nil:
		return t.readErr
	}
	return nil
}

// Stray returns how many datagrams came from servers with no peer
// attached.
func (t *Transport) Stray() int64 { return t.stray.Load() }

// Attach hands what the server at addr sends to p, until Detach: each
// datagram goes to every peer attached to its source. It fails when the
// Transport is closed or its read loop has ended. A Transport tells
// servers apart by address only: conversations of two protocols with one
// server at once belong on two Transports (package protocol's Client has
// one per protocol), or each reads the other's replies as a server
// answering what is not its protocol.
func (t *Transport) Attach(l *Link, addr netip.AddrPort, p Peer) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.errLocked(); err != nil {
		return err
	}
	l.peer, l.addr = p, addr
	l.next = t.peers[addr]
	t.peers[addr] = l
	return nil
}

// Detach stops handing the server's datagrams to l's peer.
func (t *Transport) Detach(l *Link) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch head := t.peers[l.addr]; {
	case head == l && l.next == nil:
		delete(t.peers, l.addr)
	case head == l:
		t.peers[l.addr] = l.next
	default:
		for p := head; p != nil; p = p.next {
			if p.next == l {
				p.next = l.next
				break
			}
		}
	}
	l.next, l.peer = nil, nil
}

// peersOf returns the peers attached to addr, in dst (which it may
// extend).
func (t *Transport) peersOf(addr netip.AddrPort, dst []Peer) []Peer {
	t.mu.Lock()
	for l := t.peers[addr]; l != nil; l = l.next {
		dst = append(dst, l.peer)
	}
	t.mu.Unlock()
	return dst
}

// Send sends b to addr at once.
func (t *Transport) Send(b []byte, addr netip.AddrPort) error {
	if t.cfg.Debug != nil {
		t.cfg.Debug("send", addr, b)
	}
	return udpio.WriteTo(t.conn, b, addr)
}

// loop reads the socket's datagrams and ICMP reports, a batch at a time,
// and hands each to the peers of its server, until the socket is closed
// or fails MaxReadErrors times in a row.
func (t *Transport) loop() {
	defer close(t.done)
	defer t.reader.Close()
	batch := cmp.Or(t.cfg.ReadBatch, DefaultReadBatch)
	var peers []Peer
	for failures := 0; ; {
		n, err := t.reader.Read()
		if err != nil {
			if t.cfg.Backlog != nil {
				t.cfg.Backlog(false)
			}
			if isTimeout(err) {
				continue // a deadline the caller set on its socket
			}
			if !errors.Is(err, net.ErrClosed) {
				if failures++; failures < MaxReadErrors {
					continue
				}
			}
			t.mu.Lock()
			if !t.closed {
				t.readErr = fmt.Errorf("%s: read: %w", t.cfg.Name, err)
			}
			t.mu.Unlock()
			return
		}
		failures = 0
		if t.cfg.Backlog != nil {
			t.cfg.Backlog(n == batch)
		}
		for _, rep := range t.reader.Reports() {
			peers = t.peersOf(rep.Addr, peers[:0])
			for _, p := range peers {
				p.HandleUnreachable(rep.Addr, rep.Err)
			}
		}
		now := time.Now()
		for i := range n {
			from, b := t.reader.Datagram(i)
			if t.cfg.Debug != nil {
				t.cfg.Debug("recv", from, b)
			}
			peers = t.peersOf(from, peers[:0])
			if len(peers) == 0 {
				t.stray.Add(1)
			}
			for _, p := range peers {
				p.HandleDatagram(from, b, now, t.out)
			}
		}
		clear(peers) // no peer is held past its batch
		t.out.Flush()
	}
}

// isTimeout reports whether err is a net.Error timeout, such as a read
// deadline set on a caller's socket.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Batch gathers requests to send them together (sendmmsg(2) on Linux):
// the read loop has one for the requests its peers send in reply, and a
// dispatcher that starts many conversations at once takes one from
// [Transport.NewBatch]. A Batch is used by one goroutine at a time.
type Batch struct {
	t      *Transport
	w      *udpio.Writer // nil where sends are not batched
	failed []sendFailure
}

// sendFailure is a datagram the kernel refused.
type sendFailure struct {
	to  netip.AddrPort
	err error
}

// NewBatch returns a Batch of the Transport's socket.
func (t *Transport) NewBatch() *Batch {
	b := &Batch{t: t, w: udpio.NewWriter(t.conn, sendBatch, sendBytes)}
	if b.w != nil {
		b.w.Failed = func(to netip.AddrPort, err error) { b.failed = append(b.failed, sendFailure{to, err}) }
	}
	return b
}

// Send queues p for addr, or sends it at once when it cannot be queued
// (a long datagram, or no batching on this system): the error is then
// the send's. The datagram is copied.
func (b *Batch) Send(p []byte, addr netip.AddrPort) error {
	if b.t.cfg.Debug != nil {
		b.t.cfg.Debug("send", addr, p)
	}
	if b.w.Add(p, addr) {
		return nil
	}
	return udpio.WriteTo(b.t.conn, p, addr)
}

// Len returns the number of requests queued.
func (b *Batch) Len() int { return b.w.Len() }

// Flush sends the requests queued. Each one the kernel refuses goes to
// the HandleSendError of its server's peers.
func (b *Batch) Flush() {
	if b.w.Len() == 0 {
		return
	}
	b.w.Flush()
	var peers []Peer
	for _, f := range b.failed {
		peers = b.t.peersOf(f.to, peers[:0])
		for _, p := range peers {
			p.HandleSendError(f.to, f.err)
		}
	}
	clear(b.failed)
	b.failed = b.failed[:0]
}
