package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoginGuessingIsLockedOut guesses the token on POST /login (issue 19,
// attacker row 6): after five wrong tokens the source is locked out, even
// with the right one, while another address signs in; the lockout ends
// five minutes after the last failure, and /metrics counts both.
func TestLoginGuessingIsLockedOut(t *testing.T) {
	t.Parallel()
	st, live, _ := apiFixture(t)
	h := New(st, live, Options{Token: testToken})
	var later atomic.Int64 // how far the handler's clock is ahead
	h.logins.now = func() time.Time { return time.Now().Add(time.Duration(later.Load())) }
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	post := func(from, token string) (int, http.Header, string) {
		t.Helper()
		client := clientFrom(from)
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		defer client.CloseIdleConnections()
		resp, err := client.PostForm(srv.URL+"/login", url.Values{"token": {token}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	for i := range DefaultMaxFailedLogins {
		status, _, body := post("127.0.0.1", "wrong-guess-0000000"+string(rune('a'+i)))
		want := "not right"
		if i == DefaultMaxFailedLogins-1 {
			want = "try again in 5 minutes"
		}
		if status != http.StatusUnauthorized || !strings.Contains(body, want) {
			t.Fatalf("guess %d: %d, want 401 saying %q:\n%s", i+1, status, want, body)
		}
	}
	status, hdr, body := post("127.0.0.1", testToken)
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") != "300" || !strings.Contains(body, "try again in 5 minutes") || hdr.Get("Set-Cookie") != "" {
		t.Fatalf("the right token from a locked-out source: %d, Retry-After %q, Set-Cookie %q:\n%s", status, hdr.Get("Retry-After"), hdr.Get("Set-Cookie"), body)
	}
	if status, hdr, _ := post("127.0.0.2", testToken); status != http.StatusSeeOther || hdr.Get("Set-Cookie") == "" {
		t.Fatalf("the right token from another address: %d, Set-Cookie %q", status, hdr.Get("Set-Cookie"))
	}
	fams := scrape(t, srv.URL+"/metrics", testToken)
	mustSample(t, fams, "gsq_login_failures_total", nil, DefaultMaxFailedLogins)
	mustSample(t, fams, "gsq_login_refused_total", nil, 1)

	later.Store(int64(DefaultLockoutDuration - time.Second))
	if status, _, _ := post("127.0.0.1", testToken); status != http.StatusTooManyRequests {
		t.Fatalf("a second before the lockout ends: %d, want 429", status)
	}
	later.Store(int64(DefaultLockoutDuration))
	if status, hdr, _ := post("127.0.0.1", testToken); status != http.StatusSeeOther || hdr.Get("Set-Cookie") == "" {
		t.Fatalf("after the lockout: %d, Set-Cookie %q", status, hdr.Get("Set-Cookie"))
	}
}
