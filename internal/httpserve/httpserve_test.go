package httpserve

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
)

func TestServeShutdown(t *testing.T) {
	t.Parallel()
	closed := errors.New("closed")
	var s Server
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() {
		served <- s.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hi") }), closed)
	}()
	resp, err := http.Get("http://" + l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hi" || s.LocalAddr().String() != l.Addr().String() {
		t.Fatalf("body %q, LocalAddr %v", b, s.LocalAddr())
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != closed || !s.Closed() {
		t.Fatalf("Serve after Shutdown = %v", err)
	}
	l2, _ := net.Listen("tcp", "127.0.0.1:0")
	if err := s.Serve(l2, nil, closed); err != closed {
		t.Fatalf("Serve after Shutdown = %v", err)
	}
}
