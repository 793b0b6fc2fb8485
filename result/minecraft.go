package result

import (
	"errors"
	"net/netip"
	"time"

	"github.com/gsq-project/gsq/internal/jsonenc"
	"github.com/gsq-project/gsq/minecraft/slp"
	"github.com/gsq-project/gsq/rcon/mctext"
)

// Minecraft holds a Minecraft Java server's answer to Server List Ping
// (package minecraft/slp), or to a legacy ping: the [Detail] of its
// Result. Its one section is info.
type Minecraft struct {
	// Status is the status JSON, read; nil when a legacy ping answered,
	// or nothing did.
	Status *slp.Status
	// Legacy is the reply to a legacy ping, when that answered.
	Legacy *slp.LegacyStatus
	// Trailer is what the status packet carried after the JSON (the
	// Better Compatibility Checker mod's second string), raw.
	Trailer []byte
	// Pong is set when the ping after the status got its pong (the round
	// trip is then the ping's); proxies close after the status.
	Pong bool
	// Target is the host and port that answered: the SRV target when one
	// was followed; its Host is the one the handshake named.
	Target slp.Target
	// NoStatus is set when the server accepted the connection and closed
	// it without a status ([slp.ErrNoStatus]: enable-status=false, or
	// still starting): it is up, but not answering status.
	NoStatus bool
}

// Answered reports whether the server answered a status or legacy ping.
func (m *Minecraft) Answered() bool { return m.Status != nil || m.Legacy != nil }

// PlayerList returns the players of the status's sample when it lists
// everyone online: its entries that are players (the made-up ones,
// plugins' lines of hover text, are left out), empty when nobody is on.
// It is nil when the sample does not list everyone (vanilla shows at
// most 12 of them), when the server hides its players (hide-online-players
// sends the count and no sample), for a negative count (plugins send
// any), and for a legacy reply, which has no list: the players are then
// unknown, not absent. [Minecraft.PlayersHidden] tells the cases apart.
func (m *Minecraft) PlayerList() []Player {
	if m.Status == nil || m.Status.Players == nil {
		return nil
	}
	p := m.Status.Players
	real := make([]Player, 0, len(p.Sample))
	for _, s := range p.Sample {
		if !s.Fake {
			real = append(real, Player{Name: s.Name})
		}
	}
	switch {
	case p.Online != nil && *p.Online >= 0 && int(*p.Online) <= len(real):
		return real
	case p.Online == nil && len(real) > 0:
		return real
	}
	return nil
}

// PlayersHidden reports whether the server says players are on but lists
// none of them: hide-online-players, or a proxy or plugin that sends
// lines of text instead. The monitor shows such a server as up with
// hidden players, not as empty.
func (m *Minecraft) PlayersHidden() bool {
	if m.Status == nil || m.Status.Players == nil || m.Status.Players.Online == nil || *m.Status.Players.Online <= 0 {
		return false
	}
	for _, s := range m.Status.Players.Sample {
		if !s.Fake {
			return false
		}
	}
	return true
}

// UpWithoutAnswer reports whether the server is up but does not answer
// status ([slp.ErrNoStatus]).
func (m *Minecraft) UpWithoutAnswer() bool { return m.NoStatus }

// appendHead appends "no_status": true for a server that is up but does
// not answer status.
func (m *Minecraft) appendHead(o jsonenc.Object) jsonenc.Object {
	if m.NoStatus {
		o.Bool("no_status", true)
	}
	return o
}

// appendSections appends "info", the status as docs/json.md describes it.
func (m *Minecraft) appendSections(o jsonenc.Object) jsonenc.Object {
	if !m.Answered() {
		return o
	}
	o.Key("info")
	in := o.Sub()
	if t := m.Target; t.Host != "" && !isIP(t.Host) {
		in.Key("target")
		tg := in.Sub()
		tg.Str("host", t.Host)
		tg.Uint("port", uint64(t.Port))
		tg.Bool("srv", t.SRV)
		in.B = tg.End()
	}
	if s := m.Status; s != nil {
		appendSLPStatus(&in, s)
	}
	if l := m.Legacy; l != nil {
		in.Key("legacy")
		lg := in.Sub()
		if l.Protocol != nil {
			lg.Int("protocol", int64(*l.Protocol))
		}
		lg.Bool("modern", l.Modern())
		lg.Str("version", l.Version)
		lg.Str("motd", mctext.Strip(l.MOTD))
		lg.Str("motd_legacy", l.MOTD)
		lg.Int("online", int64(l.Online))
		lg.Int("max", int64(l.Max))
		in.B = lg.End()
	}
	if m.Trailer != nil {
		in.Key("trailer_b64")
		in.B = jsonenc.AppendBase64(in.B, m.Trailer)
	}
	in.Bool("pong", m.Pong)
	o.B = in.End()
	return o
}

// appendSLPStatus appends the members of a status JSON.
func appendSLPStatus(in *jsonenc.Object, s *slp.Status) {
	if v := s.Version; v != nil {
		in.Key("version")
		vo := in.Sub()
		vo.Str("name", v.Name)
		if v.Protocol != nil {
			vo.Int("protocol", int64(*v.Protocol))
		}
		in.B = vo.End()
	}
	if p := s.Players; p != nil {
		in.Key("players")
		po := in.Sub()
		if p.Online != nil {
			po.Int("online", int64(*p.Online))
		}
		if p.Max != nil {
			po.Int("max", int64(*p.Max))
		}
		if p.Sample != nil {
			po.List("sample", len(p.Sample), func(e *jsonenc.Object, i int) {
				e.Str("name", p.Sample[i].Name)
				e.Str("id", p.Sample[i].ID)
				e.Bool("fake", p.Sample[i].Fake)
			})
		}
		in.B = po.End()
	}
	if s.Description.Raw != nil {
		in.Str("motd", s.Description.Text())
		in.Str("motd_legacy", s.Description.Legacy())
		in.Str("description", string(s.Description.Raw))
	}
	if f := s.Favicon; f != nil {
		in.Key("favicon")
		fo := in.Sub()
		fo.Str("mime", f.MIME)
		fo.Int("size", int64(f.Size))
		fo.Str("sha256", f.SHA256)
		fo.Bool("malformed", f.Malformed)
		if f.PNG != nil {
			fo.Key("data_b64")
			fo.B = jsonenc.AppendBase64(fo.B, f.PNG)
		}
		in.B = fo.End()
	}
	for _, flag := range [...]struct {
		k string
		v *bool
	}{{"enforces_secure_chat", s.EnforcesSecureChat}, {"previews_chat", s.PreviewsChat},
		{"prevents_chat_reports", s.PreventsChatReports}, {"is_modded", s.IsModded}} {
		if flag.v != nil {
			in.Bool(flag.k, *flag.v)
		}
	}
	if m := s.Mods; m != nil {
		in.Key("mods")
		mo := in.Sub()
		mo.Str("kind", m.Kind)
		if m.Type != "" {
			mo.Str("type", m.Type)
		}
		if m.FMLNetworkVersion != nil {
			mo.Int("fml_network_version", int64(*m.FMLNetworkVersion))
		}
		mo.List("mods", len(m.Mods), func(e *jsonenc.Object, i int) {
			e.Str("id", m.Mods[i].ID)
			e.Str("version", m.Mods[i].Version)
			if m.Mods[i].IgnoreServerOnly {
				e.Bool("ignore_server_only", true)
			}
		})
		mo.List("channels", len(m.Channels), func(e *jsonenc.Object, i int) {
			e.Str("name", m.Channels[i].Name)
			e.Str("version", m.Channels[i].Version)
			e.Bool("required", m.Channels[i].Required)
		})
		mo.Bool("truncated", m.Truncated)
		mo.Bool("compressed", m.Compressed)
		if m.Err != nil {
			mo.Str("error", m.Err.Error())
		}
		in.B = mo.End()
	}
}

// SetMinecraft records a Server List Ping exchange: the server's answer
// (resp) as the info section, or err, and fills the Summary (the MOTD as
// plain text for the name, the counts, the version's name) and Ping from
// it.
func (r *Result) SetMinecraft(resp *slp.Response, err error) {
	m, ok := r.Detail.(*Minecraft)
	if !ok {
		m = new(Minecraft)
		r.Detail = m
	}
	*m, r.Summary, r.Ping = Minecraft{}, Summary{}, 0
	if err == nil && (resp == nil || resp.Status == nil && resp.Legacy == nil) {
		err = errNoAnswer
	}
	if err == nil {
		*m = Minecraft{Status: resp.Status, Legacy: resp.Legacy, Trailer: resp.Trailer, Pong: resp.Pong, Target: resp.Target}
		r.Ping = max(resp.RTT, time.Nanosecond)
		r.Summary = minecraftSummary(m)
	}
	m.NoStatus = errors.Is(err, slp.ErrNoStatus)
	r.setSection(SectionInfo, err)
}

// minecraftSummary is the Summary of a status or legacy reply.
func minecraftSummary(m *Minecraft) Summary {
	var s Summary
	v := new(summaryValues)
	var name, version []byte
	var hasName, hasVersion bool
	switch {
	case m.Status != nil:
		st := m.Status
		if st.Description.Raw != nil {
			name, hasName = []byte(st.Description.Text()), true
		}
		if st.Version != nil {
			version, hasVersion = []byte(st.Version.Name), true
		}
		if p := st.Players; p != nil {
			if p.Online != nil {
				v.players = int(*p.Online)
				s.Players = &v.players
			}
			if p.Max != nil {
				v.maxPlayers = int(*p.Max)
				s.MaxPlayers = &v.maxPlayers
			}
		}
	case m.Legacy != nil:
		l := m.Legacy
		name, hasName = []byte(mctext.Strip(l.MOTD)), true
		if l.Version != "" {
			version, hasVersion = []byte(l.Version), true
		}
		v.players, v.maxPlayers = int(l.Online), int(l.Max)
		s.Players, s.MaxPlayers = &v.players, &v.maxPlayers
	}
	v.setStrings(name, nil, nil, version, nil)
	if hasName {
		s.Name = &v.strs[0]
	}
	if hasVersion {
		s.Version = &v.strs[3]
	}
	return s
}

// isIP reports whether host is an IP address rather than a name: a
// target that is its address says nothing the "address" does not.
func isIP(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}
