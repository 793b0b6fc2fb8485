package monitor

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// body encodes an alert as the request body of a webhook of format f.
func body(f Format, a *Alert) ([]byte, error) {
	switch f {
	case FormatDiscord:
		return json.Marshal(discordBody(a))
	case FormatSlack:
		return json.Marshal(slackBody(a))
	}
	b := *a
	b.Text = a.describe(oneLine)
	return json.Marshal(&b)
}

// oneLine keeps text on one line: control characters (a newline in a
// server name, say) become spaces, so that no server can forge a second
// line in a log or a chat message.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// truncate cuts s to at most n characters (runes), ending with "…" when
// it cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// The limits Discord documents for a webhook message ("Execute Webhook"
// and "Embed Limits" in its developer documentation).
const (
	discordContentMax    = 2000
	discordTitleMax      = 256
	discordDescMax       = 4096
	discordFieldNameMax  = 256
	discordFieldValueMax = 1024
	discordFooterMax     = 2048
	discordEmbedTotalMax = 6000 // characters over all of an embed's text
)

type discordMessage struct {
	Content string         `json:"content"`
	Embeds  []discordEmbed `json:"embeds"`
	// AllowedMentions with an empty parse list stops Discord from turning
	// "@everyone", "@here" or "<@id>" in a server-supplied name into a
	// ping.
	AllowedMentions discordMentions `json:"allowed_mentions"`
}

type discordMentions struct {
	Parse []string `json:"parse"`
}

type discordEmbed struct {
	Title       string         `json:"title"`
	Description string         `json:"description,omitempty"`
	Color       int            `json:"color"`
	Timestamp   string         `json:"timestamp"`
	Fields      []discordField `json:"fields,omitempty"`
	Footer      *discordFooter `json:"footer,omitempty"`
}

type discordField struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Inline bool   `json:"inline"`
}

type discordFooter struct {
	Text string `json:"text"`
}

// Colours of a chat message's side bar, by kind of alert.
var alertColors = map[AlertKind]int{
	AlertDown:    0xd9363e, // red
	AlertUp:      0x2e9e5b, // green
	AlertPlayers: 0x3b82c4, // blue
	AlertMap:     0x8a63d2, // purple
	AlertJoin:    0x3b82c4,
	AlertLeave:   0x7b8794, // grey
}

// discordEscape escapes Discord's markdown in text that came from a game
// server or the config, so that a name renders as itself: no bold, no
// link, no mention syntax, no second line.
func discordEscape(s string) string {
	s = oneLine(s)
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\*_~`|>#-[]()<@:", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// alertFields are the details of an alert as name-value pairs, their
// values escaped by esc; empty values are left out (Discord rejects
// them).
func alertFields(a *Alert, esc func(string) string) [][2]string {
	var f [][2]string
	add := func(name, value string) {
		if value != "" {
			f = append(f, [2]string{name, value})
		}
	}
	add("Server", esc(a.Server)+" ("+esc(a.Target)+", "+esc(a.Protocol)+")")
	if s := a.Summary; s != nil && s.Name != nil {
		add("Name", esc(*s.Name))
	}
	switch a.Kind {
	case AlertJoin, AlertLeave:
		add("Player", esc(a.Player))
	case AlertMap:
		add("Map", esc(a.Map))
		add("Previous map", esc(a.PreviousMap))
	case AlertDown:
		if a.Error != nil {
			add("Error", esc(string(a.Error.Kind)+": "+a.Error.Message))
		}
		if a.Since != nil {
			add("Last answer", a.Since.UTC().Format(time.RFC3339))
		}
	}
	if a.Kind != AlertMap {
		if s := a.Summary; s != nil && s.Map != nil {
			add("Map", esc(*s.Map))
		}
	}
	if s := a.Summary; s != nil && s.Players != nil {
		v := strconv.Itoa(*s.Players)
		if a.Players != nil {
			v = strconv.Itoa(*a.Players)
		}
		if s.MaxPlayers != nil {
			v += "/" + strconv.Itoa(*s.MaxPlayers)
		}
		add("Players", v)
	}
	return f
}

func discordBody(a *Alert) *discordMessage {
	text := a.describe(discordEscape)
	e := discordEmbed{
		Title:     truncate(a.title(), discordTitleMax),
		Color:     alertColors[a.Kind],
		Timestamp: a.Time.UTC().Format(time.RFC3339),
		Footer:    &discordFooter{Text: "gsq monitor"},
	}
	total := utf8.RuneCountInString(e.Title) + utf8.RuneCountInString(e.Footer.Text)
	for _, kv := range alertFields(a, discordEscape) {
		name, value := truncate(kv[0], discordFieldNameMax), truncate(kv[1], discordFieldValueMax)
		n := utf8.RuneCountInString(name) + utf8.RuneCountInString(value)
		if total+n > discordEmbedTotalMax {
			break
		}
		total += n
		e.Fields = append(e.Fields, discordField{Name: name, Value: value, Inline: len(value) <= 40})
	}
	return &discordMessage{
		Content:         truncate(text, discordContentMax),
		Embeds:          []discordEmbed{e},
		AllowedMentions: discordMentions{Parse: []string{}},
	}
}

// The limits Slack documents for Block Kit ("Blocks" reference).
const (
	slackHeaderMax  = 150
	slackSectionMax = 3000
	slackFieldMax   = 2000
	slackFieldsMax  = 10
	slackTextMax    = 4000 // the top-level text; Slack truncates beyond 40,000
)

type slackMessage struct {
	// Text is the notification's text and the fallback where blocks do
	// not show. Slack reads it as mrkdwn: &, < and > are escaped, so that
	// no server name can write "<!channel>".
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

type slackBlock struct {
	Type     string      `json:"type"`
	Text     *slackText  `json:"text,omitempty"`
	Fields   []slackText `json:"fields,omitempty"`
	Elements []slackText `json:"elements,omitempty"`
}

// slackText is a text object. Server-supplied text goes in plain_text
// objects only, which Slack shows as they are, markup and all.
type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func plainText(s string) slackText { return slackText{Type: "plain_text", Text: s} }

// slackEscape escapes the three characters Slack asks to be escaped in
// mrkdwn text.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(oneLine(s))
}

func slackBody(a *Alert) *slackMessage {
	m := &slackMessage{
		Text: truncate(a.describe(slackEscape), slackTextMax),
		Blocks: []slackBlock{
			{Type: "header", Text: &slackText{Type: "plain_text", Text: truncate(a.title(), slackHeaderMax)}},
			{Type: "section", Text: &slackText{Type: "plain_text", Text: truncate(a.describe(oneLine), slackSectionMax)}},
		},
	}
	var fields []slackText
	for _, kv := range alertFields(a, oneLine) {
		if len(fields) == slackFieldsMax {
			break
		}
		fields = append(fields, plainText(truncate(kv[0]+": "+kv[1], slackFieldMax)))
	}
	if len(fields) > 0 {
		m.Blocks = append(m.Blocks, slackBlock{Type: "section", Fields: fields})
	}
	m.Blocks = append(m.Blocks, slackBlock{Type: "context", Elements: []slackText{
		plainText(fmt.Sprintf("gsq monitor · %s", a.Time.UTC().Format(time.RFC3339))),
	}})
	return m
}
