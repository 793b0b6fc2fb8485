package rcon

import (
	"errors"
	"net"
	"syscall"
)

// passingAcceptErrors are the accept errors a server waits out rather
// than stops on: the process or the system is out of file descriptors
// or memory for the moment, or one pending connection failed before it
// was accepted (Linux reports the network errors of a pending connection
// from accept, and its manual asks servers to retry on them).
var passingAcceptErrors = []error{
	syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
	syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EPERM,
	syscall.EPROTO, syscall.ENOPROTOOPT, syscall.EOPNOTSUPP,
	syscall.ENETDOWN, syscall.ENETUNREACH, syscall.EHOSTDOWN, syscall.EHOSTUNREACH,
}

// acceptErrorPasses reports whether an accept error is worth waiting
// out: a timeout, or one of passingAcceptErrors.
func acceptErrorPasses(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range passingAcceptErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// outOfDescriptors reports whether an accept error means that the process
// or the system has no file descriptor left.
func outOfDescriptors(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
