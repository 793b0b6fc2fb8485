package monitor

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
)

// shoutrrrStorm sends three servers' down alerts, which go together,
// through a webhook of URL raw, and returns the Alerter's stats.
func shoutrrrStorm(t *testing.T, raw string) WebhookStats {
	t.Helper()
	cfg := fleetConfig(t, "alert_group_window: 200ms\nwebhooks:\n  - {name: chan, url: '"+raw+"'}\n", 3, "127.0.0.1")
	if f := cfg.Webhooks[0].Format; f != FormatShoutrrr {
		t.Fatalf("format %s, want shoutrrr", f)
	}
	a := NewAlerter(cfg, AlerterOptions{Logf: t.Logf, Backoff: time.Millisecond})
	newFleet(t, cfg, a).polls(30*time.Second, "+---")
	if err := a.Close(testutil.Context(t)); err != nil {
		t.Fatal(err)
	}
	return a.Stats()[0]
}

// checkGroupText checks that a channel got the three servers' group.
func checkGroupText(t *testing.T, what, text string) {
	t.Helper()
	for _, want := range []string{"3 servers on 127.0.0.1 are down", "srv-0000 is down", "srv-0001 is down", "srv-0002 is down"} {
		if !strings.Contains(text, want) {
			t.Errorf("%s: no %q in\n%s", what, want, text)
		}
	}
}

// TestShoutrrrHTTPChannels: ntfy, gotify and shoutrrr's generic webhook
// deliver a group of alerts, as one message, to a receiver of theirs on
// loopback.
func TestShoutrrrHTTPChannels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		url  func(host string) string
		// answer is the service's answer to a message
		answer string
		// check reads the message from the request and its body
		check func(t *testing.T, r *http.Request, body string)
	}{
		{"ntfy", func(h string) string { return "ntfy://" + h + "/gsq-alerts?disabletls=yes" },
			`{"id":"abc","time":1,"event":"message","topic":"gsq-alerts"}`,
			func(t *testing.T, r *http.Request, body string) {
				if r.URL.Path != "/gsq-alerts" || r.Method != http.MethodPost {
					t.Errorf("ntfy: %s %s", r.Method, r.URL.Path)
				}
				checkGroupText(t, "ntfy", r.Header.Get("Title")+"\n"+body)
			}},
		{"gotify", func(h string) string { return "gotify://" + h + "/Aabcdefghijklmn?disabletls=yes" },
			`{"id":1,"appid":1,"message":"x","title":"y","priority":0,"date":"2026-11-28T00:00:00Z"}`,
			func(t *testing.T, r *http.Request, body string) {
				if key := r.URL.Query().Get("token") + r.Header.Get("X-Gotify-Key"); r.URL.Path != "/message" || key != "Aabcdefghijklmn" {
					t.Errorf("gotify: %s, key %q", r.URL.Path, key)
				}
				checkGroupText(t, "gotify", body)
			}},
		{"generic", func(h string) string { return "generic://" + h + "/hook?disabletls=yes" },
			``,
			func(t *testing.T, r *http.Request, body string) {
				if r.URL.Path != "/hook" {
					t.Errorf("generic: %s", r.URL.Path)
				}
				checkGroupText(t, "generic", body)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := testutil.NewReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tt.answer)
			})
			u, _ := url.Parse(rc.URL)
			s := shoutrrrStorm(t, tt.url(u.Host))
			if rc.Count() != 1 {
				t.Fatalf("%d messages, want 1", rc.Count())
			}
			tt.check(t, rc.Request(0), string(rc.Bodies()[0]))
			if s.Sent != 3 || s.Messages != 1 || s.Failed+s.Dropped != 0 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

// TestShoutrrrFailureLoggedWithoutSecrets: a shoutrrr channel that
// refuses is retried, counted and logged, and the log holds none of its
// URL's secrets.
func TestShoutrrrFailureLoggedWithoutSecrets(t *testing.T) {
	t.Parallel()
	rc := testutil.NewReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"code":50001,"http":500,"error":"broken"}`, http.StatusInternalServerError)
	})
	u, _ := url.Parse(rc.URL)
	var mu sync.Mutex
	var logs strings.Builder
	cfg := fleetConfig(t, "alert_group_window: 0\nwebhooks:\n  - {name: chan, url: 'ntfy://someone:s3cretpass@"+u.Host+"/private-topic?disabletls=yes'}\n", 1, "127.0.0.1")
	a := NewAlerter(cfg, AlerterOptions{Attempts: 2, Backoff: time.Millisecond, Logf: func(f string, args ...any) {
		mu.Lock()
		fmt.Fprintf(&logs, f+"\n", args...)
		mu.Unlock()
	}})
	newFleet(t, cfg, a).polls(30*time.Second, "+---")
	if err := a.Close(testutil.Context(t)); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats()[0]; s.Failed != 1 || s.Sent != 0 || rc.Count() != 2 {
		t.Errorf("stats %+v, %d requests, want 1 failed after 2", s, rc.Count())
	}
	mu.Lock()
	defer mu.Unlock()
	text := logs.String()
	if !strings.Contains(text, "down alert for srv-0000 dropped") || !strings.Contains(text, "after 2 attempts") {
		t.Errorf("log:\n%s", text)
	}
	for _, secret := range []string{"someone", "s3cretpass", "private-topic"} {
		if strings.Contains(text, secret) {
			t.Errorf("the log shows %q:\n%s", secret, text)
		}
	}
}

// smtpServer is a small SMTP server on loopback (RFC 5321's minimum: no
// extensions, no TLS, no auth) that records the mails it takes.
type smtpServer struct {
	ln    net.Listener
	mu    sync.Mutex
	mails []smtpMail
}

type smtpMail struct {
	from string
	to   []string
	data string
}

func newSMTPServer(t *testing.T) *smtpServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpServer{ln: ln}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); s.serve(c) }()
		}
	}()
	return s
}

func (s *smtpServer) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(testutil.Bound))
	r := bufio.NewReader(io.LimitReader(c, 1<<20))
	say := func(line string) { io.WriteString(c, line+"\r\n") }
	say("220 gsq-test ESMTP")
	var m smtpMail
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			say("250 gsq-test")
		case strings.HasPrefix(cmd, "MAIL FROM:"):
			m = smtpMail{from: strings.TrimSpace(line[len("MAIL FROM:"):])}
			say("250 OK")
		case strings.HasPrefix(cmd, "RCPT TO:"):
			m.to = append(m.to, strings.TrimSpace(line[len("RCPT TO:"):]))
			say("250 OK")
		case cmd == "DATA":
			say("354 end with <CRLF>.<CRLF>")
			var data strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				data.WriteString(strings.TrimPrefix(l, "."))
			}
			m.data = data.String()
			s.mu.Lock()
			s.mails = append(s.mails, m)
			s.mu.Unlock()
			say("250 OK queued")
		case cmd == "RSET", cmd == "NOOP":
			say("250 OK")
		case cmd == "QUIT":
			say("221 bye")
			return
		default:
			say("502 not implemented")
		}
	}
}

// TestShoutrrrSMTP: e-mail alerts reach an SMTP server on loopback, a
// group of alerts as one mail, its subject the group's headline.
func TestShoutrrrSMTP(t *testing.T) {
	t.Parallel()
	srv := newSMTPServer(t)
	s := shoutrrrStorm(t, "smtp://"+srv.ln.Addr().String()+"/?from=gsq@example.com&to=ops@example.com&auth=None&encryption=None&usestarttls=No")
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.mails) != 1 {
		t.Fatalf("%d mails, want 1", len(srv.mails))
	}
	m := srv.mails[0]
	if !strings.Contains(m.from, "gsq@example.com") || len(m.to) != 1 || !strings.Contains(m.to[0], "ops@example.com") {
		t.Errorf("from %q, to %q", m.from, m.to)
	}
	if !strings.Contains(m.data, "Subject: 3 servers on 127.0.0.1 are down") {
		t.Errorf("no subject in the mail:\n%s", m.data)
	}
	checkGroupText(t, "smtp", m.data)
	if s.Sent != 3 || s.Messages != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestRedactError(t *testing.T) {
	t.Parallel()
	raw := "telegram://123456:AAsecretToken@telegram?chats=@mychannel"
	err := errors.New(`Post "https://api.telegram.org/bot123456:AAsecretToken/sendMessage": 401 for chat @mychannel, ` + raw)
	got := redactError(err, raw)
	for _, secret := range []string{"AAsecretToken", "mychannel", "123456"} {
		if strings.Contains(got, secret) {
			t.Errorf("%q shows %q", got, secret)
		}
	}
}
