package web

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gsq-project/gsq/monitor"
)

// Banner geometry and colours (dark, like the common server banners).
const (
	bannerW, bannerH = 360, 96
	sparkX, sparkY   = 236, 18 // the sparkline's box
	sparkW, sparkH   = 110, 56
	bannerBg         = "#161b22"
	bannerText       = "#e4e8ee"
	bannerMuted      = "#a3adba"
	bannerLine       = "#5b9cff"
)

// banner serves GET /banner/NAME.svg: a server's name, status, players,
// map and a sparkline of its players over the last 24 hours, for a
// website or a forum post. Public unless GuardBadges, as the badges are;
// browsers and embeds may cache it for 60 s.
func (h *Handler) banner(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutSuffix(r.PathValue("file"), ".svg")
	if !ok {
		http.Error(w, "banner: want /banner/NAME.svg", http.StatusNotFound)
		return
	}
	s, ok := h.live.Server(name)
	if !ok {
		http.Error(w, "banner: no such server", http.StatusNotFound)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.RequestTimeout)
	defer cancel()
	now := time.Now()
	var spark []float64 // average players per half hour; -1 when down or unknown
	if points, err := h.store.History(ctx, name, now.Add(-24*time.Hour), now, 30*time.Minute); err == nil {
		for _, p := range points {
			v := -1.0
			if p.Up && p.AvgPlayers >= 0 {
				v = p.AvgPlayers
			}
			spark = append(spark, v)
		}
	} else {
		h.log.Printf("store", "web: banner of %s: %v", name, err)
	}
	h.svgHeaders(w.Header(), 60)
	w.Write(renderBanner(&s, spark))
}

// renderBanner draws the banner; every text is cut to its room and
// escaped.
func renderBanner(s *monitor.ServerState, spark []float64) []byte {
	title := s.Name
	if n := s.Summary.Name; n != nil && *n != "" {
		title = *n
	}
	title = cutText(badgeText(title), 196)
	value, color := badgeValue(s)
	status := strings.ToUpper(string(s.Status))
	line2 := ""
	if s.Status == monitor.StatusUp {
		value = strings.TrimSuffix(value, " players")
		line2 = value + " players"
		if m := s.Summary.Map; m != nil && *m != "" {
			line2 += " · " + *m
		}
	}
	line2 = cutText(badgeText(line2), 196)
	var b bytes.Buffer
	e := html.EscapeString
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s: %s">`,
		bannerW, bannerH, bannerW, bannerH, e(title), e(strings.ToLower(status)+" "+line2))
	fmt.Fprintf(&b, `<title>%s</title>`, e(title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" rx="8" fill="%s"/>`, bannerW, bannerH, bannerBg)
	b.WriteString(`<g font-family="Verdana,Geneva,DejaVu Sans,sans-serif">`)
	fmt.Fprintf(&b, `<circle cx="20" cy="27" r="5" fill="%s"/>`, color)
	fmt.Fprintf(&b, `<text x="32" y="31" font-size="12" font-weight="bold" fill="%s">%s</text>`, color, e(status))
	fmt.Fprintf(&b, `<text x="14" y="54" font-size="13" font-weight="bold" fill="%s">%s</text>`, bannerText, e(title))
	fmt.Fprintf(&b, `<text x="14" y="76" font-size="11" fill="%s">%s</text>`, bannerMuted, e(line2))
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="9" fill="%s">players, 24 h</text>`, sparkX, sparkY+sparkH+14, bannerMuted)
	b.WriteString(`</g>`)
	b.WriteString(sparkline(spark))
	b.WriteString(`</svg>`)
	return b.Bytes()
}

// sparkline draws values (-1: a gap) in the banner's sparkline box.
func sparkline(values []float64) string {
	top := 1.0
	for _, v := range values {
		top = max(top, v)
	}
	if len(values) < 2 {
		return ""
	}
	var b strings.Builder
	step := float64(sparkW) / float64(len(values)-1)
	pen := false
	for i, v := range values {
		if v < 0 {
			pen = false
			continue
		}
		x := float64(sparkX) + float64(i)*step
		y := float64(sparkY+sparkH) - v/top*float64(sparkH)
		if pen {
			b.WriteString(" L")
		} else {
			b.WriteString(" M")
		}
		b.WriteString(strconv.FormatFloat(x, 'f', 1, 64) + " " + strconv.FormatFloat(y, 'f', 1, 64))
		pen = true
	}
	if b.Len() == 0 {
		return ""
	}
	return fmt.Sprintf(`<path d="%s" fill="none" stroke="%s" stroke-width="1.6" stroke-linejoin="round"/>`, strings.TrimSpace(b.String()), bannerLine)
}

// cutText cuts s to about width pixels of Verdana 11 px.
func cutText(s string, width int) string {
	if textWidth(s) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && textWidth(string(r)+"…") > width {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}
