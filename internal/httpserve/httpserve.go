// Package httpserve holds what gsq's HTTP-based protocol servers
// (webrcon.Server, palworld.Server) share around their handler: the
// net/http server with bounded header reads, the listener the server
// reports, and a Shutdown after which Serve returns the package's
// ErrServerClosed, as net/http's conventions go.
//
// It uses the standard library only.
package httpserve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server runs one handler on the listeners it is given. The zero value is
// ready to use.
type Server struct {
	mu     sync.Mutex
	hs     *http.Server
	ln     net.Listener
	closed bool
}

// ListenAndServe listens on addr, or def (":port") when addr is empty,
// and serves h.
func (s *Server) ListenAndServe(addr, def string, h http.Handler, closed error) error {
	if addr == "" {
		addr = def
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(l, h, closed)
}

// Serve serves h on l until Shutdown, and returns closed then (at once,
// closing l, if Shutdown came first).
func (s *Server) Serve(l net.Listener, h http.Handler, closed error) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return closed
	}
	if s.hs == nil {
		s.hs = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10}
	}
	if s.ln == nil {
		s.ln = l
	}
	hs := s.hs
	s.mu.Unlock()
	if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return closed
}

// LocalAddr is the address of the first listener served, or nil.
func (s *Server) LocalAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Closed reports whether Shutdown was called.
func (s *Server) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Shutdown stops serving as http.Server's Shutdown does: listeners close,
// idle connections close, and it waits for active requests, or for ctx.
// Hijacked connections are the caller's to close.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	hs := s.hs
	s.mu.Unlock()
	if hs == nil {
		return nil
	}
	return hs.Shutdown(ctx)
}
