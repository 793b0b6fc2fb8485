package testutil

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Receiver is a webhook receiver on loopback: it records every request
// and its body, and answers as the test's Respond says (204 when nil).
// It closes when the test ends.
type Receiver struct {
	*httptest.Server
	// Got receives a value per request, once it is recorded; it holds
	// 1024 before a request waits for the test to read it.
	Got chan struct{}

	respond  func(n int, w http.ResponseWriter, r *http.Request)
	mu       sync.Mutex
	requests []*http.Request
	bodies   [][]byte
}

// NewReceiver starts a receiver. respond, if not nil, writes the answer
// to the request numbered n (from 0).
func NewReceiver(t testing.TB, respond func(n int, w http.ResponseWriter, r *http.Request)) *Receiver {
	t.Helper()
	rc := &Receiver{Got: make(chan struct{}, 1024), respond: respond}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.bodies)
		rc.requests = append(rc.requests, r)
		rc.bodies = append(rc.bodies, b)
		rc.mu.Unlock()
		rc.Got <- struct{}{}
		if rc.respond != nil {
			rc.respond(n, w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// Count returns how many requests came.
func (rc *Receiver) Count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.bodies)
}

// Bodies returns the bodies received, in order.
func (rc *Receiver) Bodies() [][]byte {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([][]byte(nil), rc.bodies...)
}

// Request returns the request numbered n (from 0); its body is read.
func (rc *Receiver) Request(n int) *http.Request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.requests[n]
}

// Next waits for the next request (counting from those already waited
// for), within Bound, and returns its body.
func (rc *Receiver) Next(t testing.TB, n int) []byte {
	t.Helper()
	for rc.Count() <= n {
		Await(t, rc.Got, "a webhook request")
	}
	return rc.Bodies()[n]
}
