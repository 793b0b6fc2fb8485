package web

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
)

const testToken = "s3cret-token-with-enough-entropy"

func TestTokenGuards(t *testing.T) {
	t.Parallel()
	st, live, _ := apiFixture(t)
	srv, _ := newTestServer(t, st, live, Options{Token: testToken})

	guarded := []string{
		"/", "/s/alpha", "/metrics", "/probe?target=127.0.0.1:1",
		"/api/v1/servers", "/api/v1/servers/alpha", "/api/v1/servers/alpha/history",
		"/api/v1/sessions", "/api/v1/events", "/api/v1/nothing",
	}
	for _, p := range guarded {
		for _, tok := range []string{"", "wrong", testToken + "x"} {
			status, hdr, _ := testutil.Get(t, srv.URL+p, tok)
			if status != http.StatusUnauthorized || hdr.Get("WWW-Authenticate") == "" {
				t.Errorf("%s with token %q: %d, want 401 with WWW-Authenticate", p, tok, status)
			}
		}
	}
	// The API's 401 is JSON like its other errors; the page's is the
	// sign-in form.
	var e errorBody
	testutil.GetJSON(t, srv.URL+"/api/v1/servers", "", 401, &e)
	if e.Error.Code != "unauthorized" {
		t.Errorf("%+v", e)
	}
	if _, _, body := testutil.Get(t, srv.URL+"/", ""); !strings.Contains(body, `<form class="card login" method="post" action="/login">`) {
		t.Errorf("the page without a token is not the sign-in form:\n%s", body)
	}

	for _, p := range []string{"/metrics", "/api/v1/servers", "/api/v1/servers/alpha/uptime", "/", "/s/alpha"} {
		if status, _, body := testutil.Get(t, srv.URL+p, testToken); status != http.StatusOK {
			t.Errorf("%s with the token: %d %s", p, status, body)
		}
	}
	// A lower-case scheme is still a bearer token (RFC 7235: case-insensitive).
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/servers", nil)
	req.Header.Set("Authorization", "bearer "+testToken)
	if status, _, _ := testutil.Do(t, req); status != http.StatusOK {
		t.Errorf("lower-case bearer: %d", status)
	}
	// Open without the token: badges, assets, the sign-in page.
	for _, p := range []string{"/badge/alpha.svg", "/assets/app.css", "/assets/app.js", "/login"} {
		if status, _, _ := testutil.Get(t, srv.URL+p, ""); status != http.StatusOK {
			t.Errorf("%s without a token: %d, want 200", p, status)
		}
	}
	srv2, _ := newTestServer(t, st, live, Options{Token: testToken, GuardBadges: true})
	if status, _, _ := testutil.Get(t, srv2.URL+"/badge/alpha.svg", ""); status != http.StatusUnauthorized {
		t.Errorf("guarded badge without a token: %d", status)
	}
	if status, hdr, _ := testutil.Get(t, srv2.URL+"/badge/alpha.svg", testToken); status != http.StatusOK || !strings.HasPrefix(hdr.Get("Cache-Control"), "private") {
		t.Errorf("guarded badge with the token: %d, Cache-Control %q", status, hdr.Get("Cache-Control"))
	}
}

func TestSignIn(t *testing.T) {
	t.Parallel()
	st, live, _ := apiFixture(t)
	srv, _ := newTestServer(t, st, live, Options{Token: testToken})
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second}

	resp, err := client.PostForm(srv.URL+"/login", url.Values{"token": {"wrong"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "not right") {
		t.Errorf("wrong token: %d\n%s", resp.StatusCode, body)
	}

	resp, err = client.PostForm(srv.URL+"/login", url.Values{"token": {testToken}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/" {
		t.Fatalf("sign-in: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	u, _ := url.Parse(srv.URL)
	cookies := jar.Cookies(u)
	if len(cookies) != 1 || cookies[0].Name != sessionCookie || strings.Contains(cookies[0].Value, testToken) {
		t.Fatalf("cookies: %v", cookies)
	}
	for _, p := range []string{"/api/v1/servers", "/s/alpha", "/metrics"} {
		resp, err := client.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s with the cookie: %d", p, resp.StatusCode)
		}
	}
	resp, err = client.Post(srv.URL+"/logout", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = client.Get(srv.URL + "/api/v1/servers")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("after sign-out: %d", resp.StatusCode)
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	st, live, _ := apiFixture(t)
	srv, _ := newTestServer(t, st, live, Options{})
	for _, p := range []string{"/", "/s/alpha", "/api/v1/servers", "/assets/app.js", "/metrics"} {
		_, hdr, _ := testutil.Get(t, srv.URL+p, "")
		csp := hdr.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") && !strings.Contains(csp, "style-src 'unsafe-inline'") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if hdr.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", p)
		}
	}
	// The page has no inline script and loads nothing from elsewhere.
	_, _, page := testutil.Get(t, srv.URL+"/", "")
	for _, bad := range []string{"<script>", "http://", "https://", "style="} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	if m := regexp.MustCompile(`\son[a-z]+=`).FindString(page); m != "" {
		t.Errorf("the page has an inline handler: %q", m)
	}
	if _, hdr, _ := testutil.Get(t, srv.URL+"/assets/vendor/uplot/uPlot.iife.min.js", ""); hdr.Get("ETag") == "" || !strings.HasPrefix(hdr.Get("Content-Type"), "text/javascript") {
		t.Errorf("uPlot: %v", hdr)
	}
}

func TestBadge(t *testing.T) {
	t.Parallel()
	alpha := upState("alpha", 12, 32, "de_dust2")
	full := upState("full", 32, 32, "de_dust2")
	live := newTestLive(alpha, full, downState("beta"))
	srv, _ := newTestServer(t, newTestStore(t), live, Options{})
	for _, c := range []struct {
		path, want string
		status     int
	}{
		{"/badge/alpha.svg", "12/32", 200},
		{"/badge/full.svg", "32/32", 200},
		{"/badge/beta.svg", "down", 200},
		{"/badge/nobody.svg", "unknown server", 404},
		{"/badge/alpha.svg?label=" + url.QueryEscape(`<script>alert("x")</script>&`), "12/32", 200},
	} {
		status, hdr, body := testutil.Get(t, srv.URL+c.path, "")
		if status != c.status || hdr.Get("Content-Type") != "image/svg+xml; charset=utf-8" {
			t.Errorf("%s: %d %s", c.path, status, hdr.Get("Content-Type"))
		}
		if hdr.Get("Cache-Control") != "public, max-age=30" {
			t.Errorf("%s: Cache-Control %q", c.path, hdr.Get("Cache-Control"))
		}
		// Valid XML whose text holds the value, and no element but SVG's.
		dec := xml.NewDecoder(strings.NewReader(body))
		var text strings.Builder
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: not XML: %v\n%s", c.path, err, body)
			}
			switch tok := tok.(type) {
			case xml.CharData:
				text.Write(tok)
			case xml.StartElement:
				if tok.Name.Local == "script" || tok.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("%s: element %v", c.path, tok.Name)
				}
			}
		}
		if !strings.Contains(text.String(), c.want) {
			t.Errorf("%s: text %q lacks %q", c.path, text.String(), c.want)
		}
	}
	if status, _, _ := testutil.Get(t, srv.URL+"/badge/alpha.png", ""); status != 404 {
		t.Errorf("/badge/alpha.png: %d", status)
	}
}
