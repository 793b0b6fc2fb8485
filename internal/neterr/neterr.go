// Package neterr holds the error types that the protocol packages (a2s,
// ogp, rcon) share, so that their errors follow one convention, the one
// the standard library's net package set: a failed exchange with a server
// is an [*OpError] naming the operation and the address, and a timeout is a
// [net.Error] whose Timeout method reports true and which matches
// [os.ErrDeadlineExceeded] under errors.Is, as a socket deadline does.
//
// It uses the standard library only. See docs/conventions.md.
package neterr

import (
	"context"
	"errors"
	"net"
	"os"
)

// Timeout is a package's timeout sentinel, such as a2s.ErrTimeout. Its
// text is the whole message, package prefix included ("a2s: timeout").
type Timeout string

var _ net.Error = Timeout("")

// Error returns the message.
func (e Timeout) Error() string { return string(e) }

// Timeout reports true.
func (Timeout) Timeout() bool { return true }

// Temporary reports true: a timeout may not recur. It is part of
// [net.Error], whose documentation deprecates it.
func (Timeout) Temporary() bool { return true }

// Is makes a timeout match [os.ErrDeadlineExceeded].
func (Timeout) Is(target error) bool { return target == os.ErrDeadlineExceeded }

// OpError is the error of an exchange with one server. Its message is
// "<Pkg>: <Op> <Addr>: <Err>", for example
// "a2s: info 127.0.0.1:27015: no answer (timeout)". It is a [net.Error]:
// Timeout reports whether Err is a timeout.
type OpError struct {
	Pkg  string // the package: "a2s", "ogp", "rcon"
	Op   string // what was asked: "info", "players", "query", "login", "exec" ...
	Addr string // the server's address, as dialed or queried
	Err  error  // the cause
}

var _ net.Error = (*OpError)(nil)

// Error returns "<Pkg>: <Op> <Addr>: <Err>", leaving out the parts that
// are empty and a repeated "<Pkg>: " prefix of Err.
func (e *OpError) Error() string {
	prefix := e.Pkg + ": "
	s := prefix + e.Op
	if e.Addr != "" {
		if e.Op != "" {
			s += " "
		}
		s += e.Addr
	}
	if e.Err != nil {
		msg := e.Err.Error()
		if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
			msg = msg[len(prefix):]
		}
		s += ": " + msg
	}
	return s
}

// Unwrap returns the cause.
func (e *OpError) Unwrap() error { return e.Err }

// Timeout reports whether the cause is a timeout: a [net.Error] whose
// Timeout method says so, [os.ErrDeadlineExceeded] or
// [context.DeadlineExceeded].
func (e *OpError) Timeout() bool { return IsTimeout(e.Err) }

// Temporary reports the same as Timeout.
func (e *OpError) Temporary() bool { return e.Timeout() }

// IsTimeout reports whether err is a timeout: a [net.Error] whose Timeout
// method reports true, or an error matching [os.ErrDeadlineExceeded] or
// [context.DeadlineExceeded].
func IsTimeout(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded)
}

// Unreachable is the cause of an exchange whose server the network
// reported unreachable (an ICMP port, host or network unreachable): it
// matches the package's sentinel, such as a2s.ErrUnreachable, and the
// kernel's error, such as syscall.ECONNREFUSED.
type Unreachable struct {
	Sentinel error
	Err      error
}

// Error is "unreachable: " and the kernel's error.
func (e *Unreachable) Error() string { return "unreachable: " + e.Err.Error() }

// Unwrap returns the sentinel and the kernel's error.
func (e *Unreachable) Unwrap() []error { return []error{e.Sentinel, e.Err} }
