package monitor

import (
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// FormatDiscord is a Discord execute-webhook message: the alert's line as
// content, its details in an embed, and no mention that a server-supplied
// name could make.
const FormatDiscord Format = "discord"

func init() {
	registerProvider(providerKind{format: FormatDiscord, new: postJSON(chatJSON(discordBody, discordGroup)), owns: isDiscordURL, rate: discordRate})
}

// isDiscordURL reports whether u is a Discord webhook's.
func isDiscordURL(u *url.URL) bool {
	host := strings.ToLower(u.Hostname())
	return (host == "discord.com" || host == "discordapp.com" || strings.HasSuffix(host, ".discord.com")) &&
		strings.HasPrefix(u.Path, "/api/webhooks/")
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
	// discordLineMax bounds one alert's line in a group's list, so that
	// a long error message leaves room for the others.
	discordLineMax = 200
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

// discordGroup is the message of several alerts: the headline as
// content, and an embed listing one line per alert, as many as fit in
// its description. It returns how many it lists (at least one).
func discordGroup(alerts []*Alert) (*discordMessage, int) {
	e := discordEmbed{Color: 0x7b8794, Footer: &discordFooter{Text: "gsq monitor"}}
	if k := groupKind(alerts); k != "" {
		e.Color = alertColors[k]
	}
	// The title, made after, is at most discordTitleMax: keep room for it.
	budget := min(discordDescMax, discordEmbedTotalMax-discordTitleMax-utf8.RuneCountInString(e.Footer.Text))
	desc, n := listLines(alerts, discordEscape, discordLineMax, budget)
	listed := alerts[:n]
	e.Title = truncate(headline(listed, oneLine), discordTitleMax)
	e.Description = desc
	e.Timestamp = latest(listed).UTC().Format(time.RFC3339)
	return &discordMessage{
		Content:         truncate(headline(listed, discordEscape), discordContentMax),
		Embeds:          []discordEmbed{e},
		AllowedMentions: discordMentions{Parse: []string{}},
	}, n
}
