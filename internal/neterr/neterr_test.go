package neterr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
)

func TestTimeoutIsNetErrorAndDeadline(t *testing.T) {
	t.Parallel()
	var err error = Timeout("a2s: timeout")
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Timeout is not a net.Error with Timeout() true")
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Timeout does not match os.ErrDeadlineExceeded")
	}
	if errors.Is(err, context.Canceled) {
		t.Fatalf("Timeout matches context.Canceled")
	}
	if err.Error() != "a2s: timeout" {
		t.Fatalf("Error() = %q", err.Error())
	}
}

func TestOpError(t *testing.T) {
	t.Parallel()
	timeout := Timeout("ogp: timeout")
	tests := []struct {
		name        string
		err         *OpError
		want        string
		wantTimeout bool
	}{
		{"timeout", &OpError{Pkg: "ogp", Op: "query", Addr: "127.0.0.1:9", Err: timeout},
			"ogp: query 127.0.0.1:9: timeout", true},
		{"ctx deadline", &OpError{Pkg: "rcon", Op: "exec", Addr: "h:1", Err: fmt.Errorf("waiting: %w", context.DeadlineExceeded)},
			"rcon: exec h:1: waiting: context deadline exceeded", true},
		{"canceled", &OpError{Pkg: "rcon", Op: "exec", Addr: "h:1", Err: context.Canceled},
			"rcon: exec h:1: context canceled", false},
		{"no addr", &OpError{Pkg: "a2s", Op: "read", Err: errors.New("boom")},
			"a2s: read: boom", false},
		{"no op", &OpError{Pkg: "a2s", Addr: "h:1", Err: errors.New("a2s: bad")},
			"a2s: h:1: bad", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			var ne net.Error
			if !errors.As(error(tt.err), &ne) {
				t.Fatal("OpError is not a net.Error")
			}
			if ne.Timeout() != tt.wantTimeout {
				t.Errorf("Timeout() = %v, want %v", ne.Timeout(), tt.wantTimeout)
			}
			if !errors.Is(tt.err, tt.err.Err) {
				t.Errorf("does not unwrap to its cause")
			}
		})
	}
}

func TestAlsoMatchesWhatItStandsFor(t *testing.T) {
	t.Parallel()
	base := errors.New("console: authentication failed")
	other := errors.New("other")
	own := Also("x: authentication failed", base)
	wrapped := &OpError{Pkg: "x", Op: "login", Addr: "h:1", Err: own}
	if !errors.Is(wrapped, own) || !errors.Is(wrapped, base) || errors.Is(wrapped, other) {
		t.Errorf("Also: errors.Is wrong for %v", wrapped)
	}
	if wrapped.Timeout() {
		t.Error("Also is a timeout")
	}
	to := TimeoutAlso("x: timeout", base)
	var ne net.Error
	if !errors.As(to, &ne) || !ne.Timeout() || !errors.Is(to, os.ErrDeadlineExceeded) || !errors.Is(to, base) {
		t.Errorf("TimeoutAlso %v: not a timeout matching its targets", to)
	}
	c := &Cause{Msg: "no answer", Errs: []error{to, context.DeadlineExceeded}}
	if !c.Timeout() || !errors.Is(c, base) || !errors.Is(c, context.DeadlineExceeded) || c.Error() != "no answer" {
		t.Errorf("Cause %v: wrong", c)
	}
	if (&Cause{Msg: "m", Errs: []error{own}}).Timeout() {
		t.Error("Cause without a timeout reports one")
	}
}

func TestOpWrapsOnce(t *testing.T) {
	t.Parallel()
	if Op("x", "exec", "h:1", nil) != nil {
		t.Error("Op(nil) is not nil")
	}
	base := errors.New("boom")
	once := Op("x", "exec", "h:1", base)
	if got := Op("x", "login", "h:2", once); got != once || got.Error() != "x: exec h:1: boom" {
		t.Errorf("Op wrapped twice: %v", got)
	}
}
