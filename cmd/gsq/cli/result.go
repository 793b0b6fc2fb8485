package cli

import (
	"context"
	"errors"
	"math"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/gsq-project/gsq/a2s"
)

// This file builds the JSON object that `gsq query --json` and `gsq scan`
// print for one server (DESIGN.md, "gsq query --json"). The field names
// are part of gsq's contract: change them only with a note in the README.

// Error kinds of a failed section or server.
const (
	kindTimeout     = "timeout"     // no answer in time
	kindUnreachable = "unreachable" // the network said no (refused, no route, no such host)
	kindProtocol    = "protocol"    // the server answered, but badly
	kindAuth        = "auth"        // authentication failed
	kindCanceled    = "canceled"    // the user interrupted gsq
	kindRefused     = "refused"     // the server refused to answer (an A2S 'l' ban reply)
)

// errorKind classifies err for the JSON "kind" field and the exit code.
func errorKind(err error) string {
	var opErr *net.OpError
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, context.Canceled):
		return kindCanceled
	case errors.Is(err, a2s.ErrBanned):
		return kindRefused
	case errors.Is(err, a2s.ErrTimeout), errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return kindTimeout
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.As(err, &dnsErr), errors.As(err, &opErr):
		return kindUnreachable
	}
	return kindProtocol
}

// exitCodeFor maps an error kind to gsq's exit codes.
func exitCodeFor(kind string) int {
	switch kind {
	case kindTimeout, kindUnreachable:
		return ExitTimeout
	case kindAuth:
		return ExitAuth
	}
	return ExitFailure
}

// errorObject is the {"kind": ..., "message": ...} value of a failure.
func errorObject(err error) object {
	var o object
	o.set("kind", errorKind(err))
	o.set("message", err.Error())
	return o
}

// sectionError is what a failed section holds instead of its value.
func sectionError(err error) object {
	var o object
	o.set("error", errorObject(err))
	return o
}

// A2SResult is what one A2S query of a server produced: each section
// holds a value or its own error; a section not asked for has neither.
type A2SResult struct {
	Address    string
	Ping       time.Duration // round trip of the INFO exchange; 0 if unknown
	Info       *a2s.Info
	GoldSource *a2s.Info // the 'm' reply of a GoldSource server that sent both 'm' and 'I'
	InfoErr    error
	Players    *a2s.Players
	PlayersErr error
	Rules      *a2s.Rules
	RulesErr   error
	Err        error // the whole query failed (for example the address did not resolve)
}

// JSON builds the documented envelope for r.
func (r *A2SResult) JSON() object {
	o := make(object, 0, 8) // address, protocol, ping_ms, info, players, rules, mods, error
	o.set("address", r.Address)
	o.set("protocol", "a2s")
	if r.Ping > 0 {
		o.set("ping_ms", math.Round(float64(r.Ping)/float64(time.Millisecond)*100)/100)
	}
	switch {
	case r.Info != nil:
		info := infoJSON(r.Info)
		if r.GoldSource != nil && r.GoldSource != r.Info {
			info.set("goldsource", infoJSON(r.GoldSource))
		}
		o.set("info", info)
	case r.InfoErr != nil:
		o.set("info", sectionError(r.InfoErr))
	}
	switch {
	case r.Players != nil:
		o.set("players", playerList{r.Players})
	case r.PlayersErr != nil:
		o.set("players", sectionError(r.PlayersErr))
	}
	switch {
	case r.Rules != nil:
		o.set("rules", ruleList{r.Rules})
		if mods, ok := browserJSON(r.Rules); ok {
			o.set("mods", mods)
		}
	case r.RulesErr != nil:
		o.set("rules", sectionError(r.RulesErr))
	}
	if err := r.firstError(); err != nil && r.Info == nil && r.Players == nil && r.Rules == nil {
		o.set("error", errorObject(err))
	} else {
		o.set("error", nil)
	}
	return o
}

// firstError is the whole-query error, or else the first section error.
func (r *A2SResult) firstError() error {
	for _, err := range []error{r.Err, r.InfoErr, r.PlayersErr, r.RulesErr} {
		if err != nil {
			return err
		}
	}
	return nil
}

// ExitCode is 0 when every section asked for came back, 3 when what failed
// only timed out or was unreachable, and 1 when a server answered badly.
func (r *A2SResult) ExitCode() int {
	code := ExitOK
	for _, err := range []error{r.Err, r.InfoErr, r.PlayersErr, r.RulesErr} {
		if err != nil {
			code = worseExit(code, exitCodeFor(errorKind(err)))
		}
	}
	return code
}

// worseExit combines the exit codes of several results: a protocol
// failure outranks a timeout, which outranks success.
func worseExit(a, b int) int {
	rank := func(c int) int {
		switch c {
		case ExitOK:
			return 0
		case ExitTimeout:
			return 1
		}
		return 2
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

func infoJSON(in *a2s.Info) object {
	o := make(object, 0, 32) // sized once: a Source reply has about 20 fields
	if in.Format == a2s.TypeInfoReplyGoldSource {
		o.set("format", "goldsource")
		o.text("server_address", in.Address)
	} else {
		o.set("format", "source")
	}
	o.set("protocol", in.Protocol)
	o.text("name", in.Name)
	o.text("map", in.Map)
	o.text("folder", in.Folder)
	o.text("game", in.Game)
	if in.Format != a2s.TypeInfoReplyGoldSource {
		o.set("app_id", in.AppID())
	}
	players, maxPlayers := in.PlayerCounts()
	o.set("players", players)
	o.set("max_players", maxPlayers)
	if players != int(in.Players) || maxPlayers != int(in.MaxPlayers) {
		// Servers with more than 255 slots wrap the count bytes and carry
		// the real numbers in their keywords; keep what the bytes said.
		o.set("players_byte", in.Players)
		o.set("max_players_byte", in.MaxPlayers)
	}
	if in.NoBots {
		o.set("bots", nil) // the server left the byte out
	} else {
		o.set("bots", in.Bots)
	}
	o.set("server_type", in.ServerType.String())
	o.set("environment", in.Environment.String())
	if in.Visibility == 0 {
		o.set("visibility", "public")
	} else {
		o.set("visibility", "private")
	}
	o.set("vac", in.VAC == 1)
	if in.Mod != nil {
		var m object
		m.text("link", in.Mod.Link)
		m.text("download_link", in.Mod.DownloadLink)
		m.set("version", in.Mod.Version)
		m.set("size", in.Mod.Size)
		m.set("multiplayer_only", in.Mod.Type == 1)
		m.set("own_dll", in.Mod.DLL == 1)
		o.set("mod", m)
	}
	if in.Ship != nil {
		var s object
		s.set("mode", in.Ship.Mode)
		s.set("witnesses", in.Ship.Witnesses)
		s.set("duration", in.Ship.Duration)
		o.set("ship", s)
	}
	if in.Format != a2s.TypeInfoReplyGoldSource {
		o.text("version", in.Version)
	}
	if in.EDF&a2s.EDFPort != 0 {
		o.set("port", in.Port)
	}
	if in.EDF&a2s.EDFSteamID != 0 {
		o.set("steam_id", in.SteamID)
	}
	if in.EDF&a2s.EDFKeywords != 0 {
		o.text("keywords", in.Keywords)
	}
	if in.EDF&a2s.EDFGameID != 0 {
		o.set("game_id", in.GameID)
	}
	if key, tags := tagsJSON(in); key != "" {
		o.set(key, tags)
	}
	if in.EDF&a2s.EDFSpectator != 0 {
		o.set("spectator_port", in.SpectatorPort)
		o.text("spectator_name", in.SpectatorName)
	}
	return o
}

// roundFloat rounds to n decimals so float32 noise (123.40000152) does not
// reach the JSON output.
func roundFloat(v float64, n int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow(10, float64(n))
	return math.Round(v*p) / p
}
