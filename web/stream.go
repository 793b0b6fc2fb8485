package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/monitor"
)

// streamWriteTimeout bounds one write to a live stream's client: a client
// that stops reading is dropped after it, whatever its TCP buffers hold.
const streamWriteTimeout = 10 * time.Second

// hub fans the monitor's events out to the live streams. It subscribes to
// the monitor while at least one stream is open, encodes each event once,
// and never blocks on a client: a client whose queue is full is dropped.
type hub struct {
	live       Live
	buffer     int
	maxClients int

	dropped atomic.Uint64 // clients dropped for falling behind, theirs or the subscription's

	mu      sync.Mutex
	clients map[*streamClient]struct{}
	gen     int                // bumped by each subscription
	cancel  context.CancelFunc // ends the current subscription
}

// streamClient is one open live stream.
type streamClient struct {
	server string                     // only this server's events, if set
	kinds  map[monitor.EventKind]bool // only these kinds, if set
	queue  chan []byte                // encoded events, bounded
	drop   chan struct{}              // closed when the hub drops the client
	once   sync.Once
}

func newHub(live Live, buffer, maxClients int) *hub {
	return &hub{live: live, buffer: buffer, maxClients: maxClients, clients: map[*streamClient]struct{}{}}
}

// errTooManyStreams is join's answer when maxClients streams are open.
var errTooManyStreams = fmt.Errorf("too many live streams are open")

// join adds a client, subscribing to the monitor if it is the first.
func (h *hub) join(server string, kinds map[monitor.EventKind]bool) (*streamClient, error) {
	h.mu.Lock()
	if len(h.clients) >= h.maxClients {
		h.mu.Unlock()
		return nil, errTooManyStreams
	}
	c := &streamClient{server: server, kinds: kinds, queue: make(chan []byte, h.buffer), drop: make(chan struct{})}
	h.clients[c] = struct{}{}
	var ctx context.Context
	gen := 0
	if len(h.clients) == 1 {
		ctx, h.cancel = context.WithCancel(context.Background())
		h.gen++
		gen = h.gen
	}
	h.mu.Unlock()
	// Subscribe outside the lock: the monitor may hold its own lock while
	// it hands the previous subscription an event, which needs ours.
	if ctx != nil {
		go h.run(gen, h.live.Subscribe(ctx))
	}
	return c, nil
}

// leave removes a client, ending the subscription after the last.
func (h *hub) leave(c *streamClient) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.clients[c]; !ok {
		return
	}
	delete(h.clients, c)
	if len(h.clients) == 0 && h.cancel != nil {
		h.cancel()
		h.cancel = nil
	}
}

// count returns how many clients are open.
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// run delivers the events of subscription gen until its channel closes.
func (h *hub) run(gen int, events <-chan monitor.Event) {
	for ev := range events {
		msg := encodeEvent(ev)
		h.mu.Lock()
		if gen == h.gen {
			for c := range h.clients {
				if !c.wants(ev) {
					continue
				}
				select {
				case c.queue <- msg:
				default:
					// The client is behind by a whole queue: drop it rather
					// than hold more for it. Its browser reconnects and
					// reloads the state.
					delete(h.clients, c)
					c.once.Do(func() { close(c.drop) })
					h.dropped.Add(1)
				}
			}
			if len(h.clients) == 0 && h.cancel != nil {
				h.cancel()
				h.cancel = nil
			}
		}
		h.mu.Unlock()
	}
	// The monitor ended the subscription, because the hub fell behind or
	// the monitor stopped: drop its clients, which reconnect and start a
	// new one.
	h.mu.Lock()
	defer h.mu.Unlock()
	if gen != h.gen {
		return
	}
	for c := range h.clients {
		delete(h.clients, c)
		c.once.Do(func() { close(c.drop) })
		h.dropped.Add(1)
	}
	if h.cancel != nil {
		h.cancel()
		h.cancel = nil
	}
}

func (c *streamClient) wants(ev monitor.Event) bool {
	if c.server != "" && ev.Server != c.server && ev.Kind != monitor.EventConfig {
		return false
	}
	return c.kinds == nil || c.kinds[ev.Kind]
}

// encodeEvent returns ev as one server-sent event: its sequence number as
// the id (consecutive on a stream that filters nothing), its kind as the
// event name, and as data the JSON {"kind", "server"?, "time",
// "detail"?, "previous"?, "baseline"?, "slot"?, "state"?}, with state as
// in the API.
func encodeEvent(ev monitor.Event) []byte {
	// The kind comes from the monitor, but a line break in it would end
	// the field.
	kind := strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, string(ev.Kind))
	b := make([]byte, 0, 1024)
	if ev.Seq != 0 {
		b = append(b, "id: "...)
		b = strconv.AppendUint(b, ev.Seq, 10)
		b = append(b, '\n')
	}
	b = append(b, "event: "...)
	b = append(b, kind...)
	b = append(b, "\ndata: "...)
	// JSON as written here has no raw line breaks.
	b = append(b, `{"kind":`...)
	b = appendString(b, string(ev.Kind))
	if ev.Server != "" {
		b = append(b, `,"server":`...)
		b = appendString(b, ev.Server)
	}
	b = append(b, `,"time":`...)
	b = appendTime(b, ev.Time)
	if ev.Detail != "" {
		b = append(b, `,"detail":`...)
		b = appendString(b, ev.Detail)
	}
	if ev.Previous != "" {
		b = append(b, `,"previous":`...)
		b = appendString(b, ev.Previous)
	}
	if ev.Baseline {
		b = append(b, `,"baseline":true`...)
	}
	if !ev.Slot.IsZero() {
		b = append(b, `,"slot":`...)
		b = appendTime(b, ev.Slot)
	}
	if ev.State != nil {
		b = append(b, `,"state":`...)
		b = appendServer(b, ev.State, true)
	}
	return append(b, "}\n\n"...)
}

// events serves GET /api/v1/events: the monitor's events as server-sent
// events, optionally only one server's (server=NAME) or some kinds
// (kind=down,up).
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var kinds map[monitor.EventKind]bool
	if s := q.Get("kind"); s != "" {
		kinds = map[monitor.EventKind]bool{}
		for k := range strings.SplitSeq(s, ",") {
			kind := monitor.EventKind(strings.TrimSpace(k))
			if !slices.Contains(eventKinds, kind) {
				writeError(w, http.StatusBadRequest, "bad_parameter", fmt.Sprintf("kind: unknown kind %q", k))
				return
			}
			kinds[kind] = true
		}
	}
	c, err := h.hub.join(q.Get("server"), kinds)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "busy", err.Error())
		return
	}
	defer h.hub.leave(c)

	rc := http.NewResponseController(w)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no") // no buffering in nginx
	w.WriteHeader(http.StatusOK)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	// retry: how long a browser waits before it reconnects.
	if !write([]byte("retry: 3000\n: connected\n\n")) {
		return
	}
	heartbeat := time.NewTicker(h.opts.Heartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.drop:
			return
		case msg := <-c.queue:
			if !write(msg) {
				return
			}
			heartbeat.Reset(h.opts.Heartbeat)
		case <-heartbeat.C:
			if !write([]byte(": heartbeat\n\n")) {
				return
			}
		}
	}
}

// eventKinds are the kinds a stream can be limited to.
var eventKinds = []monitor.EventKind{
	monitor.EventPoll, monitor.EventDown, monitor.EventUp, monitor.EventMap,
	monitor.EventJoin, monitor.EventLeave, monitor.EventConfig,
}
