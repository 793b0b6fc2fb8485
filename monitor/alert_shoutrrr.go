package monitor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/nicholas-fedor/shoutrrr/pkg/router"
	"github.com/nicholas-fedor/shoutrrr/pkg/types"
)

// FormatShoutrrr sends alerts through github.com/nicholas-fedor/shoutrrr
// (pinned in go.mod): a webhook whose URL is one of its services'
// (telegram://, ntfy://, smtp://, gotify://, teams://, pushover://,
// matrix://, ... as its documentation writes them) gets the alerts as
// plain text, a title and a message. It is the format of every URL that
// is not http:// or https://; the grouping, rate limits, retries,
// logging and journal are the Alerter's, as for every channel.
const FormatShoutrrr Format = "shoutrrr"

// shoutrrrRate is a service's default rate: Telegram takes about one
// message a second in a chat, ntfy.sh refills a visitor's requests at
// one per 5 s after a burst of 60, e-mail has no stated one.
var shoutrrrRate = Rate{1, time.Second}

// Bounds of a shoutrrr message: Telegram's 4,096 characters are the
// strictest of the common services.
const (
	shoutrrrTextMax  = 4000
	shoutrrrGroupMax = 100
	shoutrrrLineMax  = 200
)

func init() {
	registerProvider(providerKind{format: FormatShoutrrr, new: newShoutrrr, owns: isShoutrrrURL, rate: shoutrrrRate})
}

// isShoutrrrURL reports whether u is a shoutrrr service's URL: any
// scheme but http and https.
func isShoutrrrURL(u *url.URL) bool { return u.Scheme != "http" && u.Scheme != "https" }

// shoutrrrServices are the schemes shoutrrr knows, for messages.
func shoutrrrServices() []string {
	names := (&router.ServiceRouter{}).ListServices()
	slices.Sort(names)
	return names
}

// checkShoutrrrURL says what is wrong with a shoutrrr URL, or "": its
// service must be one shoutrrr has, and take the URL's settings.
func checkShoutrrrURL(raw string, u *url.URL) string {
	scheme, _, _ := strings.Cut(u.Scheme, "+")
	if !slices.Contains(shoutrrrServices(), scheme) {
		what := u.Scheme + ":"
		if u.Host != "" {
			what = redactURL(raw)
		}
		return fmt.Sprintf("must be an http:// or https:// URL, or a shoutrrr service's (%s), not %s", strings.Join(shoutrrrServices(), ", "), what)
	}
	if _, err := (&router.ServiceRouter{}).Locate(raw); err != nil {
		// The router says only that the service failed: ask the service
		// why, where the URL is the service's own.
		if svc, serr := (&router.ServiceRouter{}).NewService(scheme); serr == nil && scheme == u.Scheme {
			if ierr := svc.Initialize(u, nil); ierr != nil {
				err = ierr
			}
		}
		return fmt.Sprintf("is not a %s URL shoutrrr takes: %s", scheme, redactError(err, raw))
	}
	return ""
}

// shoutrrrSender is the Provider of one shoutrrr URL.
type shoutrrrSender struct {
	hook Webhook
}

func newShoutrrr(h Webhook, _ *http.Client) Provider { return &shoutrrrSender{hook: h} }

// Send sends one message, bounded by ctx: shoutrrr's services take no
// context, so a send that outlives it is abandoned (the service's own
// timeout, 10 s for most, ends it).
func (p *shoutrrrSender) Send(ctx context.Context, alerts []*Alert) (int, error) {
	title, msg, n := shoutrrrMessage(alerts)
	svc, err := (&router.ServiceRouter{}).Locate(p.hook.URL)
	if err != nil {
		return n, errors.New(redactError(err, p.hook.URL))
	}
	params := types.Params{"title": title}
	done := make(chan error, 1)
	go func() { done <- svc.Send(msg, &params) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		return n, &SendError{Err: errors.New(netReason(ctx.Err())), Retry: true}
	}
	if err != nil {
		// shoutrrr's errors do not say whether another attempt may help:
		// take them as a network error's.
		return n, &SendError{Err: errors.New(redactError(err, p.hook.URL)), Retry: true}
	}
	return n, nil
}

// shoutrrrMessage is the title and text of a message of the first
// alerts, and how many it carries: one alert's line and details, or a
// group's headline and one line per alert, within shoutrrrTextMax.
func shoutrrrMessage(alerts []*Alert) (title, text string, n int) {
	if len(alerts) == 1 {
		a := alerts[0]
		lines := []string{a.describe(oneLine)}
		for _, kv := range alertFields(a, oneLine) {
			lines = append(lines, kv[0]+": "+kv[1])
		}
		return a.title(), truncate(strings.Join(lines, "\n"), shoutrrrTextMax), 1
	}
	// The list, after a line for the headline (which also goes as the
	// title, where the service has one: some have none).
	list, n := listLines(alerts[:min(len(alerts), shoutrrrGroupMax)], oneLine, shoutrrrLineMax, shoutrrrTextMax-1-shoutrrrLineMax)
	title = headline(alerts[:n], oneLine)
	return title, truncate(title, shoutrrrLineMax) + "\n" + list, n
}

// urlLike is anything in an error's text that looks like a URL.
var urlLike = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"']+`)

// redactError is err's text without the webhook's secrets: its URL,
// anything that looks like a URL, and the URL's user, password, path and
// query (tokens, chat ids, addresses) wherever they appear.
func redactError(err error, raw string) string {
	s := strings.ReplaceAll(err.Error(), raw, "(URL)")
	s = urlLike.ReplaceAllString(s, "(URL)")
	if u, perr := url.Parse(raw); perr == nil {
		var secrets []string
		if u.User != nil {
			secrets = append(secrets, u.User.Username())
			if pw, ok := u.User.Password(); ok {
				secrets = append(secrets, pw)
			}
		}
		secrets = append(secrets, strings.Split(strings.Trim(u.Path, "/"), "/")...)
		for _, vs := range u.Query() {
			secrets = append(secrets, vs...)
		}
		for _, sec := range secrets {
			if len(sec) >= 4 {
				s = strings.ReplaceAll(s, sec, "[redacted]")
			}
		}
	}
	return oneLine(truncate(s, 300))
}
