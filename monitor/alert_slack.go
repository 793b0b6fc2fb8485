package monitor

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// FormatSlack is a Slack incoming-webhook message: the alert's line as
// its text, and Block Kit blocks with the details as plain text.
const FormatSlack Format = "slack"

func init() {
	registerProvider(providerKind{format: FormatSlack, new: postJSON(chatJSON(slackBody, slackGroup)), owns: isSlackURL, rate: slackRate})
}

// isSlackURL reports whether u is a Slack incoming webhook's.
func isSlackURL(u *url.URL) bool { return strings.ToLower(u.Hostname()) == "hooks.slack.com" }

// The limits Slack documents for Block Kit ("Blocks" reference).
const (
	slackHeaderMax  = 150
	slackSectionMax = 3000
	slackFieldMax   = 2000
	slackFieldsMax  = 10
	slackTextMax    = 4000 // the top-level text; Slack truncates beyond 40,000
	// A group's list: sections of lines, each line bounded.
	slackGroupSections = 10
	slackLineMax       = 200
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

// slackGroup is the message of several alerts: the headline as text and
// header, and the list of their lines in plain_text sections, as many
// as slackGroupSections hold. It returns how many it lists (at least
// one).
func slackGroup(alerts []*Alert) (*slackMessage, int) {
	var sections []string
	var cur strings.Builder
	n := 0
	for _, a := range alerts {
		line := "• " + truncate(a.describe(oneLine), slackLineMax)
		if cur.Len() > 0 && utf8.RuneCountInString(cur.String())+1+utf8.RuneCountInString(line) > slackSectionMax {
			if len(sections)+1 == slackGroupSections {
				break
			}
			sections = append(sections, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte('\n')
		}
		cur.WriteString(line)
		n++
	}
	sections = append(sections, cur.String())
	listed := alerts[:n]
	m := &slackMessage{
		Text:   truncate(headline(listed, slackEscape), slackTextMax),
		Blocks: []slackBlock{{Type: "header", Text: &slackText{Type: "plain_text", Text: truncate(headline(listed, oneLine), slackHeaderMax)}}},
	}
	for _, s := range sections {
		m.Blocks = append(m.Blocks, slackBlock{Type: "section", Text: &slackText{Type: "plain_text", Text: s}})
	}
	m.Blocks = append(m.Blocks, slackBlock{Type: "context", Elements: []slackText{
		plainText(fmt.Sprintf("gsq monitor · %s", latest(listed).UTC().Format(time.RFC3339))),
	}})
	return m, n
}
