package slp

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/gsq-project/gsq/internal/hostport"
	"github.com/gsq-project/gsq/internal/neterr"
)

// Resolver looks up what StatusHost needs; *net.Resolver is one. Tests
// give a fake, or a net.Resolver whose Dial reaches a loopback DNS
// server.
type Resolver interface {
	LookupSRV(ctx context.Context, service, proto, name string) (cname string, addrs []*net.SRV, err error)
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Target is a host and port to ask, and what the handshake names.
type Target struct {
	Host string // an IP address or a name, without a trailing dot
	Port uint16
	// SRV is set when the target came from the _minecraft._tcp record of
	// the host the user gave.
	SRV bool
}

// String is "host:port".
func (t Target) String() string { return net.JoinHostPort(t.Host, strconv.Itoa(int(t.Port))) }

func (c *Client) resolver() Resolver {
	if c.Resolver == nil {
		return net.DefaultResolver
	}
	return c.Resolver
}

// Resolve turns HOST[:PORT] into the targets to ask, in order, as the
// vanilla client does: with a port, or an IP address, the host itself;
// with a name and no port, the targets of its _minecraft._tcp SRV records
// (unless NoSRV), ordered by priority and, within one, shuffled by weight
// (RFC 2782), and the name on port 25565 when it has none.
func (c *Client) Resolve(ctx context.Context, hostPort string) ([]Target, error) {
	hp, err := hostport.Parse(hostPort, 0)
	noPort := errors.Is(err, hostport.ErrNoPort)
	if noPort {
		hp, err = hostport.Parse(hostPort, DefaultPort)
	}
	if err != nil {
		return nil, &OpError{Pkg: "slp", Op: "resolve", Addr: strings.TrimSpace(hostPort), Err: err}
	}
	if !noPort || hp.Addr.IsValid() || c.NoSRV {
		return []Target{{Host: hp.Host, Port: hp.Port}}, nil
	}
	_, recs, err := c.resolver().LookupSRV(ctx, "minecraft", "tcp", hp.Host)
	if err != nil || len(recs) == 0 {
		if ctx.Err() != nil {
			return nil, &OpError{Pkg: "slp", Op: "resolve", Addr: hp.Host, Err: ctx.Err()}
		}
		return []Target{{Host: hp.Host, Port: hp.Port}}, nil
	}
	var ts []Target
	for _, r := range orderSRV(recs) {
		if host := strings.TrimSuffix(r.Target, "."); host != "" && r.Port != 0 {
			ts = append(ts, Target{Host: host, Port: r.Port, SRV: true})
		}
	}
	if len(ts) == 0 {
		return []Target{{Host: hp.Host, Port: hp.Port}}, nil
	}
	return ts, nil
}

// orderSRV orders records by priority, lowest first, and within a
// priority by RFC 2782's weighted draw: a record is drawn with a chance
// proportional to its weight, records of weight 0 last (in random order).
func orderSRV(recs []*net.SRV) []*net.SRV {
	recs = slices.Clone(recs)
	slices.SortStableFunc(recs, func(a, b *net.SRV) int { return cmp.Compare(a.Priority, b.Priority) })
	for i := 0; i < len(recs); {
		j := i
		for j < len(recs) && recs[j].Priority == recs[i].Priority {
			j++
		}
		group := recs[i:j]
		for k := range group {
			sum := 0
			for _, r := range group[k:] {
				sum += int(r.Weight)
			}
			pick := k + rand.IntN(len(group)-k)
			if sum > 0 {
				n := rand.IntN(sum)
				for m, r := range group[k:] {
					if n -= int(r.Weight); n < 0 {
						pick = k + m
						break
					}
				}
			}
			group[k], group[pick] = group[pick], group[k]
		}
		i = j
	}
	return recs
}

// maxAddrsPerTarget bounds the addresses of one target that are tried.
const maxAddrsPerTarget = 4

// StatusHost asks the server at HOST[:PORT] for its status, following
// its SRV record as Resolve says. Each target is tried in order, each of
// its addresses (up to four) in turn, until one answers; the handshake
// names the target's host. Response.Target says which answered. The error
// is the last target's.
func (c *Client) StatusHost(ctx context.Context, hostPort string) (*Response, error) {
	ts, err := c.Resolve(ctx, hostPort)
	if err != nil {
		return nil, err
	}
	var last error
	for _, t := range ts {
		addrs, err := c.lookup(ctx, t.Host)
		if err != nil {
			last = &OpError{Pkg: "slp", Op: "resolve", Addr: t.Host, Err: err}
			continue
		}
		for _, a := range addrs[:min(len(addrs), maxAddrsPerTarget)] {
			r, err := c.StatusTarget(ctx, t, netip.AddrPortFrom(a, t.Port))
			if err == nil {
				return r, nil
			}
			last = err
			if ctx.Err() != nil || !errors.Is(err, ErrUnreachable) && !neterr.IsTimeout(err) {
				return nil, err // the server answered: another address would not do better
			}
		}
	}
	return nil, last
}

// ResolveAddr returns the target StatusHost asks first for HOST[:PORT]
// and its address (an IPv4 one preferred, as a scan takes them): the first
// target, in Resolve's order, whose host resolves. The error is the last target's, matching ErrUnreachable when
// no target resolves.
func (c *Client) ResolveAddr(ctx context.Context, hostPort string) (Target, netip.AddrPort, error) {
	ts, err := c.Resolve(ctx, hostPort)
	if err != nil {
		return Target{}, netip.AddrPort{}, err
	}
	var last error
	for _, t := range ts {
		addrs, err := c.lookup(ctx, t.Host)
		if err == nil {
			a := addrs[max(slices.IndexFunc(addrs, func(a netip.Addr) bool { return a.Unmap().Is4() }), 0)]
			return t, netip.AddrPortFrom(a.Unmap(), t.Port), nil
		}
		last = &OpError{Pkg: "slp", Op: "resolve", Addr: t.Host, Err: err}
	}
	return Target{}, netip.AddrPort{}, last
}

// lookup is host's addresses: itself when it is one.
func (c *Client) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	addrs, err := c.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, &neterr.Unreachable{Sentinel: ErrUnreachable, Err: err}
	}
	if len(addrs) == 0 {
		return nil, &neterr.Unreachable{Sentinel: ErrUnreachable, Err: errors.New("no addresses")}
	}
	return addrs, nil
}
