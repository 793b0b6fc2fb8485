// Package testutil holds the helpers the module's tests share, so that
// each is written once: a bounded context, a file in a test's directory,
// a hex test vector, a GET of a JSON API, a bounded wait on a channel,
// a webhook receiver on loopback, and a TCP relay that can be cut. Only
// tests import it.
//
// Every wait here is bounded by [Bound]: a test that waits longer has
// hung, and fails saying what it waited for.
package testutil

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// Bound is the longest a test waits for anything: a bound on a hang, not
// a timing.
const Bound = 30 * time.Second

// Context returns a context that ends when the test ends, or after
// Bound.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), Bound)
	t.Cleanup(cancel)
	return ctx
}

// WriteFile writes data to path, readable by the owner only, and
// returns path.
func WriteFile(t testing.TB, path, data string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Unhex decodes a spec-style hex dump ("FF FF 49 ..."), ignoring spaces,
// line breaks and the "|" that some vectors put between fields.
func Unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(strings.ReplaceAll(s, "|", " ")), ""))
	if err != nil {
		t.Fatalf("bad hex: %v", err)
	}
	return b
}

// Get fetches url, with token as a bearer token when it is not empty,
// and returns the status, the headers and the body.
func Get(t testing.TB, url, token string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(Context(t), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return Do(t, req)
}

// Do sends req, bounded by Bound, and returns the status, the headers
// and the body.
func Do(t testing.TB, req *http.Request) (int, http.Header, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(req.Context(), Bound)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

// GetJSON fetches url as Get does, checks that the status is wantStatus
// and the body UTF-8 JSON, and decodes it into v.
func GetJSON(t testing.TB, url, token string, wantStatus int, v any) {
	t.Helper()
	status, hdr, body := Get(t, url, token)
	if status != wantStatus {
		t.Fatalf("GET %s: %d, want %d: %s", url, status, wantStatus, body)
	}
	mt, params, err := mime.ParseMediaType(hdr.Get("Content-Type"))
	if err != nil || mt != "application/json" || params["charset"] != "utf-8" {
		t.Fatalf("GET %s: Content-Type %q, want application/json; charset=utf-8", url, hdr.Get("Content-Type"))
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v\n%s", url, err, body)
	}
}

// Diff compares two lists of names as multisets: joined has a name for
// each player next has more of than prev, left one for each it has
// fewer of, both sorted. Test fixtures use it to write the sessions a
// list of players makes.
func Diff(prev, next []string) (joined, left []string) {
	count := make(map[string]int)
	for _, n := range next {
		count[n]++
	}
	for _, n := range prev {
		count[n]--
	}
	for n, c := range count {
		for ; c > 0; c-- {
			joined = append(joined, n)
		}
		for ; c < 0; c++ {
			left = append(left, n)
		}
	}
	slices.Sort(joined)
	slices.Sort(left)
	return joined, left
}

// Await receives from ch, failing the test when nothing comes within
// Bound or ch is closed; what names the wait in the failure.
func Await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(Bound)
	defer timer.Stop()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatalf("waiting for %s: the channel was closed", what)
		}
		return v
	case <-timer.C:
		t.Fatalf("no %s within %s", what, Bound)
	}
	var zero T
	return zero
}
