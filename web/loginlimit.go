package web

import (
	"net/http"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gsq-project/gsq/console"
)

// Defaults of the sign-in limit (Options.MaxFailedLogins and
// Options.LockoutDuration), those of gsq's RCON server.
const (
	// DefaultMaxFailedLogins is how many wrong tokens one source may post
	// to /login before it is locked out.
	DefaultMaxFailedLogins = 5
	// DefaultLockoutDuration is how long a lockout lasts after the last
	// failure, and how long a failure is remembered.
	DefaultLockoutDuration = 5 * time.Minute
)

// loginLimit counts the failed sign-ins of each source (an IPv4 address
// or an IPv6 /64) and locks out one that reaches the limit, as gsq's
// RCON server does (console.Lockout): a locked-out source is
// refused even with the right token, until the lockout has passed since
// its last failure.
type loginLimit struct {
	table           console.Lockout
	now             func() time.Time // the clock; tests set it
	failed, refused atomic.Uint64
}

func newLoginLimit(limit int, lockFor time.Duration) *loginLimit {
	return &loginLimit{table: console.Lockout{Limit: limit, For: lockFor}, now: time.Now}
}

// sourceAddr is a request's client address; one the server cannot read
// is the zero address, a source of its own.
func sourceAddr(r *http.Request) netip.Addr {
	ap, _ := netip.ParseAddrPort(r.RemoteAddr)
	return ap.Addr()
}

// blocked reports whether r's source is locked out, and counts the
// refusal if so.
func (l *loginLimit) blocked(r *http.Request) bool {
	if !l.table.Blocked(sourceAddr(r), l.now()) {
		return false
	}
	l.refused.Add(1)
	return true
}

// fail counts a failed sign-in of r's source, and reports whether the
// source is locked out from now on.
func (l *loginLimit) fail(r *http.Request) bool {
	l.failed.Add(1)
	return l.table.Fail(sourceAddr(r), l.now())
}

// retryAfter is the Retry-After of a refusal, in seconds: the whole
// lockout, which is at most what remains of it.
func (l *loginLimit) retryAfter() string {
	return strconv.Itoa(int(l.table.For.Seconds()))
}

// The sign-in limit's series.
var (
	descLoginFailures = prometheus.NewDesc("gsq_login_failures_total",
		"Sign-ins on /login with a wrong token.", nil, nil)
	descLoginRefused = prometheus.NewDesc("gsq_login_refused_total",
		"Sign-ins on /login refused (429) because their source was locked out after too many wrong tokens.", nil, nil)
)

// Describe sends the descriptions of the sign-in limit's series.
func (l *loginLimit) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLoginFailures
	ch <- descLoginRefused
}

// Collect sends the sign-in limit's series.
func (l *loginLimit) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descLoginFailures, prometheus.CounterValue, float64(l.failed.Load()))
	ch <- prometheus.MustNewConstMetric(descLoginRefused, prometheus.CounterValue, float64(l.refused.Load()))
}
