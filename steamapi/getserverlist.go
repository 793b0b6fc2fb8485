package steamapi

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gsq-project/gsq/serverlist"
)

// MaxLimit is the most servers one GetServerList request returns, whatever
// its limit asks (icewind1991/steam-vent#6); without a limit the API
// returns 100 (xDimGG/node-steamapi#51).
const MaxLimit = 10_000

// Bounds of a [Client.List], for the fields left zero.
const (
	// DefaultMaxRequests bounds the requests of one listing: with the
	// default pacing, four minutes and more.
	DefaultMaxRequests = 256
	// DefaultMaxServers bounds the distinct servers one listing hands
	// out (the set that drops repeats holds them all).
	DefaultMaxServers = 1_000_000
)

// The method's paths: /v1/ first; some mirrors answer only /v0001/
// (PredatH0r/SteamServerBrowser PR #46 tries both).
const (
	serverListPath      = "/IGameServersService/GetServerList/v1/"
	serverListPathV0001 = "/IGameServersService/GetServerList/v0001/"
)

// ListResult says what a listing got.
type ListResult struct {
	// Requests counts the requests made.
	Requests int
	// Servers counts the distinct servers handed out; Relays those of
	// them at a Steam Datagram Relay address (169.254.0.0/16), which no
	// query reaches; Duplicates the servers listed again (by another
	// partition, or twice in one answer), dropped; Malformed the records
	// without a readable address, skipped.
	Servers, Relays, Duplicates, Malformed int
	// Full reports, of a GetServerList, an answer holding as many
	// servers as the limit asked: there may be more, and List would ask
	// for them.
	Full bool
	// Filters are the filters asked, in order: the caller's, then the
	// partitions of those that came back full.
	Filters []string
	// CutShort are the filters whose answer came back full though they
	// could be split no further, and those left unasked when MaxRequests
	// ran out: the listing is incomplete there. Empty when it is
	// complete.
	CutShort []string
}

// Complete reports whether the listing got every server the list holds
// for its filter (as far as a list that changes while it is read can
// say).
func (r *ListResult) Complete() bool { return len(r.CutShort) == 0 }

// GetServerList asks for the servers that match filter (package
// serverlist's language; a trailing NUL, carried over from the UDP
// format, is trimmed), at most limit of them (0 or more than MaxLimit:
// MaxLimit), and calls each with every server as the answer is read; each
// returns false to stop. The *serverlist.Server is valid until each
// returns. It is one request: see List for more than MaxLimit servers.
// An error after some servers were handed out (a body cut short, too
// large, or not JSON further on) is returned with the ListResult of what
// came.
func (c *Client) GetServerList(ctx context.Context, filter string, limit int, each func(*serverlist.Server) bool) (*ListResult, error) {
	flt, err := c.checkList(filter)
	if err != nil {
		return &ListResult{}, err
	}
	if limit <= 0 || limit > MaxLimit {
		limit = MaxLimit
	}
	return c.list(ctx, flt, limit, false, each)
}

// checkList checks what a GetServerList needs before anything is sent:
// a key it can carry, and a filter that reads.
func (c *Client) checkList(filter string) (serverlist.Filter, error) {
	if err := checkKey(c.Key); err != nil {
		return serverlist.Filter{}, opError("GetServerList", c.host(), err)
	}
	flt, err := serverlist.Parse(filter)
	if err != nil {
		return flt, opError("GetServerList", c.host(), err)
	}
	return flt, nil
}

// getServerList makes one request for filter, counting in res and
// handing each record to each; it reports whether the answer was full.
func (c *Client) getServerList(ctx context.Context, filter string, limit int, res *ListResult, each func(*serverlist.Server) bool) (full bool, err error) {
	q := url.Values{"key": {c.Key}, "limit": {strconv.Itoa(limit)}}
	if filter != "" {
		q.Set("filter", filter)
	}
	res.Requests++
	res.Filters = append(res.Filters, filter)
	var st listStats
	read := func(body io.Reader) error {
		var err error
		st, err = decodeServers(body, "GetServerList", nil, func(r *record) bool {
			s, ok := r.server()
			if !ok {
				res.Malformed++
				return true
			}
			return each(&s)
		})
		res.Malformed += st.malformed
		return err
	}
	c.mu.Lock()
	path := serverListPath
	if c.v0001 {
		path = serverListPathV0001
	}
	c.mu.Unlock()
	err = c.get(ctx, "GetServerList", path, q, read)
	if path == serverListPath && isNotFound(err) {
		if err2 := c.get(ctx, "GetServerList", serverListPathV0001, q, read); !isNotFound(err2) {
			c.mu.Lock()
			c.v0001 = true
			c.mu.Unlock()
			err = err2
		}
	}
	return st.records >= limit, err
}

func isNotFound(err error) bool {
	se, ok := asStatus(err)
	return ok && se.Code == 404
}

// partitionTerms are the conditions List splits a full answer by, each
// into the servers that meet it and those that do not (\nor\1 and it):
// halves that do not overlap, whatever the list. A filter that already
// names a condition's key is not split by it. The map comes last, split
// by the maps the full answer held.
var partitionTerms = []serverlist.Term{
	serverlist.Cond("secure", "1"),
	serverlist.Cond("dedicated", "1"),
	serverlist.Cond("linux", "1"),
	serverlist.Cond("empty", "1"),
	serverlist.Cond("full", "1"),
	serverlist.Cond("password", "0"),
	serverlist.Cond("proxy", "1"),
	serverlist.Cond("white", "1"),
}

// maxMapSplit is how many maps a full answer is split by at most: the
// most common ones, and the rest.
const maxMapSplit = 16

// part is a filter still to ask, and how far it is split.
type part struct {
	filter serverlist.Filter
	next   int // the index in partitionTerms of the next split; len: the map split
}

// List lists every server that matches filter, more than MaxLimit if the
// list holds more: a request whose answer comes back full is asked again
// in two complementary halves (\secure\1 and \nor\1\secure\1, then
// \dedicated\1, \linux\1, \empty\1, ...; last, by the maps the full answer
// held), until every part comes back short of the limit. each is called
// with every distinct server as the answers are read (a server listed by
// two requests is handed out once), and returns false to stop. A part
// that comes back full once every split is spent, and the parts left
// when MaxRequests run out, are named in ListResult.CutShort, and the
// error then matches ErrCutShort: the list is incomplete, and says where.
func (c *Client) List(ctx context.Context, filter string, each func(*serverlist.Server) bool) (*ListResult, error) {
	flt, err := c.checkList(filter)
	if err != nil {
		return &ListResult{}, err
	}
	return c.list(ctx, flt, cmp.Or(min(max(c.Limit, 0), MaxLimit), MaxLimit), true, each)
}

// list asks for flt, limit servers a request, and, when partition is
// set, for the parts of every answer that comes back full.
func (c *Client) list(ctx context.Context, flt serverlist.Filter, limit int, partition bool, each func(*serverlist.Server) bool) (*ListResult, error) {
	// Limits: zero is the default, negative none.
	maxReq := cmp.Or(c.MaxRequests, DefaultMaxRequests)
	maxServers := cmp.Or(c.MaxServers, DefaultMaxServers)
	if maxReq < 0 {
		maxReq = math.MaxInt
	}
	if maxServers < 0 {
		maxServers = math.MaxInt
	}
	res := &ListResult{}
	seen := make(map[netip.AddrPort]struct{})
	stopped := false
	queue := []part{{filter: flt, next: firstSplit(flt, 0)}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if res.Requests >= maxReq {
			res.CutShort = append(res.CutShort, p.filter.String())
			continue
		}
		maps := map[string]int{}
		full, err := c.getServerList(ctx, p.filter.String(), limit, res, func(s *serverlist.Server) bool {
			if s.Map != "" && partition {
				maps[s.Map]++
			}
			if _, ok := seen[s.Addr]; ok {
				res.Duplicates++
				return true
			}
			if len(seen) >= maxServers {
				stopped = true
				return false
			}
			seen[s.Addr] = struct{}{}
			res.Servers++
			if s.Relay() {
				res.Relays++
			}
			if !each(s) {
				stopped = true
				return false
			}
			return true
		})
		switch {
		case err != nil:
			return res, err
		case stopped && len(seen) >= maxServers:
			res.CutShort = append(res.CutShort, p.filter.String())
			for _, q := range queue {
				res.CutShort = append(res.CutShort, q.filter.String())
			}
			return res, opError("List", c.host(), fmt.Errorf("%w: MaxServers %d reached", ErrCutShort, maxServers))
		case stopped:
			return res, nil
		case !full:
			continue
		case !partition:
			res.Full = true
			continue
		}
		halves := split(p, maps)
		if halves == nil {
			res.CutShort = append(res.CutShort, p.filter.String())
		}
		queue = append(queue, halves...)
	}
	if len(res.CutShort) > 0 {
		return res, opError("List", c.host(), fmt.Errorf("%w: %d parts came back full and could not be split further, or were not asked (MaxRequests %d)",
			ErrCutShort, len(res.CutShort), maxReq))
	}
	return res, nil
}

// firstSplit is the index of the first condition of partitionTerms, from
// i, whose key flt does not name.
func firstSplit(flt serverlist.Filter, i int) int {
	for ; i < len(partitionTerms); i++ {
		if !names(flt.Terms, partitionTerms[i].Key) {
			break
		}
	}
	return i
}

// names reports whether terms hold key, at any depth.
func names(terms []serverlist.Term, key string) bool {
	return slices.ContainsFunc(terms, func(t serverlist.Term) bool { return t.Key == key || names(t.Terms, key) })
}

// split returns the parts p splits into: by its next condition, or by
// the maps of its full answer (the most common of them, and the rest);
// nil when nothing is left to split by.
func split(p part, maps map[string]int) []part {
	if p.next < len(partitionTerms) {
		t := partitionTerms[p.next]
		next := firstSplit(p.filter, p.next+1)
		return []part{{filter: p.filter.And(t), next: next}, {filter: p.filter.And(serverlist.Nor(t)), next: next}}
	}
	if p.next > len(partitionTerms) || names(p.filter.Terms, "map") {
		return nil
	}
	type mapCount struct {
		name string
		n    int
	}
	var common []mapCount
	for m, n := range maps {
		if !strings.ContainsAny(m, "\\\x00") {
			common = append(common, mapCount{m, n})
		}
	}
	if len(common) < 2 {
		return nil // one map: splitting by it gains nothing
	}
	slices.SortFunc(common, func(a, b mapCount) int { return cmp.Or(b.n-a.n, strings.Compare(a.name, b.name)) })
	common = common[:min(len(common), maxMapSplit)]
	var out []part
	rest := make([]serverlist.Term, 0, len(common))
	for _, m := range common {
		t := serverlist.Cond("map", m.name)
		out = append(out, part{filter: p.filter.And(t), next: len(partitionTerms) + 1})
		rest = append(rest, t)
	}
	return append(out, part{filter: p.filter.And(serverlist.Nor(rest...)), next: len(partitionTerms) + 1})
}
