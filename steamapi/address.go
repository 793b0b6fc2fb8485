package steamapi

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gsq-project/gsq/internal/flexjson"
	"github.com/gsq-project/gsq/serverlist"
)

// addressPath is ISteamApps/GetServersAtAddress, which needs no key.
const addressPath = "/ISteamApps/GetServersAtAddress/v0001/"

// AddressServer is a server GetServersAtAddress lists at an IP address:
// its query address (Addr), game and spectator ports, steamid, app,
// game directory, region and VAC flag in Server, and three fields of its
// own.
type AddressServer struct {
	serverlist.Server
	// Lan reports a server that calls itself a LAN server: lists hide
	// it.
	Lan bool
	// GMSIndex is the "gmsindex" field: by its name, the server's place
	// in the game master server's list (its meaning is not documented).
	GMSIndex int64
	// Reject is why Steam refuses to list the server, when the answer
	// says (the field notes' "reject"; the values are not documented).
	Reject string
}

// GetServersAtAddress asks what Steam knows at ip: every game server it
// has heard from there. It needs no key. Valve calls it "intended for
// troubleshooting only", so a Client asks about one address at most once
// in AddressInterval ([ErrTooFrequent] before that, nothing sent).
func (c *Client) GetServersAtAddress(ctx context.Context, ip netip.Addr) ([]AddressServer, error) {
	const op = "GetServersAtAddress"
	ip = ip.Unmap()
	if !ip.IsValid() {
		return nil, opError(op, c.host(), fmt.Errorf("no address given"))
	}
	if err := c.askAbout(ip); err != nil {
		return nil, opError(op, c.host(), err)
	}
	var servers []AddressServer
	var success *bool
	var message string
	err := c.get(ctx, op, addressPath, url.Values{"addr": {ip.String()}}, func(body io.Reader) error {
		_, err := decodeServers(body, op, func(key string, v json.RawMessage) {
			switch key {
			case "success":
				var ok flexjson.Bool
				_ = ok.UnmarshalJSON(v)
				b := bool(ok)
				success = &b
			case "message":
				var m flexjson.String
				_ = m.UnmarshalJSON(v)
				message = string(m)
			}
		}, func(r *record) bool {
			s, ok := r.server()
			if ok {
				servers = append(servers, AddressServer{Server: s, Lan: bool(r.Lan), GMSIndex: int64(r.GMSIndex), Reject: string(r.Reject)})
			}
			return true
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if success != nil && !*success {
		if message == "" {
			message = "no message"
		}
		return nil, opError(op, c.host(), fmt.Errorf("%w: %s", ErrFailed, message))
	}
	return servers, nil
}

// askAbout records a request about ip, or refuses it within
// AddressInterval of the previous one.
func (c *Client) askAbout(ip netip.Addr) error {
	gap := max(0, cmp.Or(c.AddressInterval, DefaultAddressInterval))
	if gap <= 0 {
		return nil
	}
	c.init()
	now := c.clock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if last, ok := c.asked[ip]; ok && now.Sub(last) < gap {
		return fmt.Errorf("%w: %v was asked about %v ago; again at %v", ErrTooFrequent, ip, now.Sub(last).Round(time.Second),
			last.Add(gap).Format(time.TimeOnly))
	}
	if c.asked == nil {
		c.asked = make(map[netip.Addr]time.Time)
	}
	if len(c.asked) >= 1024 {
		for a, t := range c.asked {
			if now.Sub(t) >= gap {
				delete(c.asked, a)
			}
		}
	}
	c.asked[ip] = now
	return nil
}

// Listing answers "is my server listed, and if not, why".
type Listing struct {
	// Addr is the address asked about: a query or a game address.
	Addr netip.AddrPort
	// Listed reports a server Steam lists at Addr, as a public server.
	Listed bool
	// Server is the entry at Addr (its query or its game address), nil
	// when there is none.
	Server *AddressServer
	// Others are the servers Steam knows at Addr's IP on other ports.
	Others []AddressServer
	// Why says it in words: what was found, and what to check.
	Why string
}

// Listed asks GetServersAtAddress about addr's IP and says whether a
// server is listed at addr (its query port or its game port), and if
// not, why not, as far as the answer tells: nothing known at the IP (the
// server's heartbeat does not reach Steam), other ports only, a LAN
// server, or a rejection.
func (c *Client) Listed(ctx context.Context, addr netip.AddrPort) (*Listing, error) {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	servers, err := c.GetServersAtAddress(ctx, addr.Addr())
	if err != nil {
		return nil, err
	}
	l := &Listing{Addr: addr}
	for i := range servers {
		s := &servers[i]
		if l.Server == nil && (s.Addr == addr || s.GameAddr() == addr) {
			l.Server = s
			continue
		}
		l.Others = append(l.Others, *s)
	}
	switch s := l.Server; {
	case s != nil && s.Reject != "":
		l.Why = fmt.Sprintf("Steam knows the server at %v (app %d), but rejects it: %s", addr, s.AppID, s.Reject)
	case s != nil && s.Lan:
		l.Why = fmt.Sprintf("Steam knows the server at %v (app %d), but it calls itself a LAN server (sv_lan 1, or no -public): lists hide it", addr, s.AppID)
	case s != nil:
		l.Listed = true
		l.Why = fmt.Sprintf("listed: app %d (%s), query port %d, game port %d, steamid %d", s.AppID, s.GameDir, s.Addr.Port(), s.GameAddr().Port(), s.SteamID)
	case len(l.Others) > 0:
		var ports []string
		for _, o := range l.Others {
			ports = append(ports, fmt.Sprintf("%d (game port %d, app %d)", o.Addr.Port(), o.GameAddr().Port(), o.AppID))
		}
		slices.Sort(ports)
		l.Why = fmt.Sprintf("Steam lists no server on port %d of %v, but %d on other ports: %s; is %d the port the server announces?",
			addr.Port(), addr.Addr(), len(l.Others), strings.Join(ports, ", "), addr.Port())
	default:
		l.Why = fmt.Sprintf("Steam knows no server at %v: the server's heartbeat does not reach Steam's master (is it started as a public server, "+
			"and may it send UDP out to Steam?), or it stopped more than a few minutes ago", addr.Addr())
	}
	return l, nil
}
