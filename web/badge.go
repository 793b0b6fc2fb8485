package web

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gsq-project/gsq/monitor"
)

// Badge colours, those of the common flat status badges.
const (
	badgeGreen  = "#3b9c3b"
	badgeYellow = "#c48a00"
	badgeRed    = "#d9453a"
	badgeGrey   = "#8a8a8a"
	badgeLabel  = "#555"
	maxBadgeLen = 40 // runes of a label or value
)

// badge serves GET /badge/NAME.svg: a status badge with the server's name
// (or ?label=) on the left and "12/32", "down" or "pending" on the right.
// Browsers and chat embeds may cache it for 30 s.
func (h *Handler) badge(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutSuffix(r.PathValue("file"), ".svg")
	if !ok {
		http.Error(w, "badge: want /badge/NAME.svg", http.StatusNotFound)
		return
	}
	label := name
	if l := r.URL.Query().Get("label"); l != "" {
		label = l
	}
	status := http.StatusOK
	value, color := "unknown server", badgeGrey
	if s, ok := h.live.Server(name); ok {
		value, color = badgeValue(&s)
	} else {
		status = http.StatusNotFound
	}
	h.svgHeaders(w.Header(), 30)
	w.WriteHeader(status)
	w.Write(renderBadge(label, value, color))
}

// svgHeaders are the headers of a badge or banner: an image any site
// may embed, cached maxAge seconds (privately when the token guards it).
func (h *Handler) svgHeaders(hd http.Header, maxAge int) {
	hd.Set("Content-Type", "image/svg+xml; charset=utf-8")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	hd.Set("Cross-Origin-Resource-Policy", "cross-origin")
	hd.Del("X-Frame-Options")
	scope := "public"
	if h.opts.GuardBadges && h.opts.Token != "" {
		scope = "private"
	}
	hd.Set("Cache-Control", scope+", max-age="+strconv.Itoa(maxAge))
}

// badgeValue is the right half of a server's badge, and its colour.
func badgeValue(s *monitor.ServerState) (string, string) {
	switch s.Status {
	case monitor.StatusDown:
		return "down", badgeRed
	case monitor.StatusPending:
		return "pending", badgeGrey
	}
	p, m := s.Summary.Players, s.Summary.MaxPlayers
	switch {
	case p != nil && m != nil && *m > 0:
		color := badgeGreen
		if *p >= *m {
			color = badgeYellow
		}
		return fmt.Sprintf("%d/%d", *p, *m), color
	case p != nil && *p == 1:
		return "1 player", badgeGreen
	case p != nil:
		return fmt.Sprintf("%d players", *p), badgeGreen
	}
	return "up", badgeGreen
}

// renderBadge draws a flat two-part badge. Text widths are estimated from
// Verdana's metrics at 11 px, as the common badge services do; the text
// is escaped, and characters XML forbids are dropped.
func renderBadge(label, value, color string) []byte {
	label, value = badgeText(label), badgeText(value)
	lw, vw := textWidth(label)+12, textWidth(value)+12
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="%s: %s">`,
		lw+vw, html.EscapeString(label), html.EscapeString(value))
	fmt.Fprintf(&b, `<title>%s: %s</title>`, html.EscapeString(label), html.EscapeString(value))
	b.WriteString(`<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>`)
	fmt.Fprintf(&b, `<clipPath id="r"><rect width="%d" height="20" rx="3" fill="#fff"/></clipPath>`, lw+vw)
	fmt.Fprintf(&b, `<g clip-path="url(#r)"><rect width="%d" height="20" fill="%s"/><rect x="%d" width="%d" height="20" fill="%s"/><rect width="%d" height="20" fill="url(#s)"/></g>`,
		lw, badgeLabel, lw, vw, color, lw+vw)
	b.WriteString(`<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">`)
	for _, t := range []struct {
		x    int
		text string
	}{{lw / 2, label}, {lw + vw/2, value}} {
		esc := html.EscapeString(t.text)
		fmt.Fprintf(&b, `<text x="%d" y="15" fill="#010101" fill-opacity=".3">%s</text><text x="%d" y="14">%s</text>`, t.x, esc, t.x, esc)
	}
	b.WriteString(`</g></svg>`)
	return b.Bytes()
}

// badgeText keeps at most maxBadgeLen printable runes of s.
func badgeText(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			continue
		}
		if n == maxBadgeLen {
			b.WriteRune('…')
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// textWidth estimates the width of s in Verdana 11 px.
func textWidth(s string) int {
	w := 0.0
	for _, r := range s {
		switch {
		case strings.ContainsRune("iIl.,:;|!'’ ", r):
			w += 3.9
		case strings.ContainsRune("fjrt()[]/", r):
			w += 4.9
		case strings.ContainsRune("mwMW%@", r):
			w += 10.5
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-' || r == '+':
			w += 7.5
		case r < 0x80:
			w += 6.6
		case r >= 0x1100:
			w += 11 // wide scripts and symbols
		default:
			w += 7
		}
	}
	return int(w + 0.5)
}
