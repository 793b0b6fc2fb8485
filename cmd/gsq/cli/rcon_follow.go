package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gsq-project/gsq/battleye"
	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/sdtd"
	"github.com/gsq-project/gsq/webrcon"
)

// This file is `gsq rcon --follow`: the events of a console session
// (console.Session.Events), printed as they come until Ctrl-C, as lines
// for a terminal or one JSON object each with --json.

// followNotes is how often a follow prints what the client said on its
// own goroutine (reconnections) while no event comes.
const followNotes = time.Second

// followEvents prints the events of s until ctx ends (Ctrl-C), which is a
// normal end (exit 0), or the session ends.
func followEvents(ctx context.Context, env *Env, t *rconTarget, s console.Session, out *rconPrinter) error {
	fmt.Fprintf(env.Stderr, "gsq: following %s (%s); Ctrl-C stops\n", t.addr, t.protocolName())
	tick := time.NewTicker(followNotes)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			out.flushNotes()
			return nil
		case <-tick.C:
			out.flushNotes()
		case e, ok := <-s.Events():
			if !ok {
				out.flushNotes()
				out.errorf("the session with %s ended", t.addr)
				return silentExit(ExitFailure)
			}
			out.flushNotes()
			if out.json {
				out.eventJSON(e)
			} else {
				out.event(e)
			}
		}
	}
}

// eventJSON prints one event as a JSON line: {"time","kind","text"} and,
// when the protocol says them, "player", "player_id" and "channel";
// "missed" counts the events lost before it. Heartbeats are kept: a
// script may watch for them.
func (p *rconPrinter) eventJSON(e console.Event) {
	var o object
	o.set("time", e.Time.UTC().Format(time.RFC3339Nano))
	o.set("kind", string(e.Kind))
	o.set("text", e.Text)
	if e.Player != "" {
		o.set("player", e.Player)
	}
	if e.PlayerID != "" {
		o.set("player_id", e.PlayerID)
	}
	if e.Channel != "" {
		o.set("channel", e.Channel)
	}
	if e.Missed > 0 {
		o.set("missed", e.Missed)
	}
	p.env.Stdout.Write(append(appendObject(nil, o), '\n'))
}

// connLost reports whether err says that the connection was lost while
// a command ran, whatever the protocol.
func connLost(err error) bool {
	for _, lost := range []error{rcon.ErrConnClosed, rcon.ErrProtocol, webrcon.ErrConnLost, battleye.ErrConnLost, sdtd.ErrConnLost} {
		if errors.Is(err, lost) {
			return true
		}
	}
	return false
}
