package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"math"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

// assets are the page's files, embedded so that the binary needs no build
// step and loads nothing from elsewhere. vendor/uplot is the uPlot chart
// library as published on npm (see its VERSION and LICENSE files).
//
//go:embed assets
var assets embed.FS

// asset is one embedded file ready to serve.
type asset struct {
	body  []byte
	etag  string
	ctype string
}

var (
	assetsOnce sync.Once
	assetFiles map[string]asset // by URL path, "/assets/app.js"
)

// loadAssets reads the embedded files once, with an ETag from each one's
// content, so that a browser revalidates them cheaply.
func loadAssets() map[string]asset {
	assetsOnce.Do(func() {
		assetFiles = map[string]asset{}
		fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			body, err := assets.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(body)
			ctype := mime.TypeByExtension(path.Ext(p))
			if ctype == "" {
				ctype = "application/octet-stream"
			}
			assetFiles["/"+p] = asset{body, `"` + hex.EncodeToString(sum[:8]) + `"`, ctype}
			return nil
		})
	})
	return assetFiles
}

// serveAsset writes the asset at p, or 404.
func serveAsset(w http.ResponseWriter, r *http.Request, p string) {
	a, ok := loadAssets()[p]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", "no-cache") // revalidate with the ETag
	h.Set("ETag", a.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

// assetHandler serves /assets/: the page's script, style and the chart
// library. They hold no data, so the token does not guard them (the
// sign-in page needs the style).
func assetHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		serveAsset(w, r, r.URL.Path)
	})
}

// pageHandler serves the page (/ and /s/NAME), which loads its data from
// the API.
func pageHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveAsset(w, r, "/assets/index.html")
	})
}

func notFoundPage(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "404 page not found; the monitor's page is at /", http.StatusNotFound)
}

// loginTemplate is the sign-in page, rendered by html/template (which
// escapes what it inserts) with no script at all.
var loginTemplate = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="dark light">
<title>Sign in · gsq monitor</title>
<link rel="icon" href="/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/app.css">
</head><body class="login-body">
<form class="card login" method="post" action="/login">
<h1 class="brand">gsq <span>monitor</span></h1>
<p>This monitor needs its access token.</p>
{{if eq .State 1}}<p class="login-error" role="alert">That token is not right.</p>{{end}}
{{if eq .State 2}}<p class="login-error" role="alert">Too many wrong tokens from your address: try again in {{.Minutes}} minutes.</p>{{end}}
<label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Sign in</button>
</form>
</body></html>
`))

// What the sign-in page says above the form.
const (
	loginFresh     = iota // nothing
	loginFailed           // the token was wrong
	loginLockedOut        // too many wrong tokens
)

func (h *Handler) renderLogin(w http.ResponseWriter, status, state int) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	loginTemplate.Execute(w, struct{ State, Minutes int }{state, int(math.Ceil(h.opts.LockoutDuration.Minutes()))})
}

func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	if h.opts.Token == "" || h.authorized(r) {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	h.renderLogin(w, http.StatusOK, loginFresh)
}

// maxLoginForm bounds the sign-in form's body.
const maxLoginForm = 4 << 10

// login checks the token posted by the sign-in form and sets the session
// cookie: HttpOnly, SameSite=Strict, Secure over TLS. Its value is derived
// from the token, not the token itself.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if h.opts.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if h.logins.blocked(r) {
		h.log.Printf("auth", "web: sign-in from %s refused: locked out after %d wrong tokens (gsq_login_refused_total)", r.RemoteAddr, h.opts.MaxFailedLogins)
		w.Header().Set("Retry-After", h.logins.retryAfter())
		h.renderLogin(w, http.StatusTooManyRequests, loginLockedOut)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginForm)
	if err := r.ParseForm(); err != nil || !equal(r.PostFormValue("token"), h.opts.Token) {
		h.log.Printf("auth", "web: failed sign-in from %s", r.RemoteAddr)
		if h.logins.fail(r) {
			h.renderLogin(w, http.StatusUnauthorized, loginLockedOut)
			return
		}
		h.renderLogin(w, http.StatusUnauthorized, loginFailed)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: h.session, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
		MaxAge: 30 * 24 * 3600,
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
