package neterr

import (
	"errors"
	"os"
	"slices"
)

// Also returns a package's sentinel error whose message is msg and which
// also matches, under errors.Is, each error of also: the errors of a
// package it stands for, as webrcon.ErrAuthFailed stands for
// console.ErrAuthFailed. An error wrapping it matches them all.
func Also(msg string, also ...error) error { return &alias{msg: msg, also: also} }

// TimeoutAlso is [Also] for a timeout: it is a [net.Error] whose Timeout
// method reports true, and it matches [os.ErrDeadlineExceeded] as well as
// each error of also.
func TimeoutAlso(msg string, also ...error) error {
	return &alias{msg: msg, also: append(also, os.ErrDeadlineExceeded), timeout: true}
}

type alias struct {
	msg     string
	also    []error
	timeout bool
}

func (e *alias) Error() string        { return e.msg }
func (e *alias) Is(target error) bool { return slices.Contains(e.also, target) }
func (e *alias) Timeout() bool        { return e.timeout }
func (e *alias) Temporary() bool      { return e.timeout }

// Cause is the cause of a failed exchange: a message for people and the
// errors it matches under errors.Is, such as a package's ErrAuthFailed
// and the kernel's error that revealed it. It is a [net.Error] whose
// Timeout method reports whether one of them is a timeout.
type Cause struct {
	Msg  string
	Errs []error
}

// Error returns Msg.
func (e *Cause) Error() string { return e.Msg }

// Unwrap returns Errs.
func (e *Cause) Unwrap() []error { return e.Errs }

// Timeout reports whether one of Errs is a timeout.
func (e *Cause) Timeout() bool { return slices.ContainsFunc(e.Errs, IsTimeout) }

// Temporary reports the same as Timeout.
func (e *Cause) Temporary() bool { return e.Timeout() }

// Op wraps err in an [*OpError] of package pkg, unless err is nil or
// already one.
func Op(pkg, op, addr string, err error) error {
	if err == nil {
		return nil
	}
	var oe *OpError
	if errors.As(err, &oe) {
		return err
	}
	return &OpError{Pkg: pkg, Op: op, Addr: addr, Err: err}
}
