package ogp

// ParseAnswer parses a Default Query v1 answer body in dialect d. The
// answer's own echoed masks drive the parse. Text fields alias body.
//
// When the answer sets a bit whose layout this package does not know, the
// error wraps [ErrUnknownField] and the returned Answer still holds the
// sections parsed before it (its Request has the unparsed sections
// cleared). Any other error returns a nil Answer. Trailing bytes after
// the last section are ignored.
func ParseAnswer(body []byte, d Dialect) (*Answer, error) {
	a, _, err := parseAnswer(body, d)
	return a, err
}

// parseAnswer is ParseAnswer, also returning how many bytes were left
// after the last section.
func parseAnswer(body []byte, d Dialect) (*Answer, int, error) {
	a := new(Answer)
	dec := newDecoder(body, d, "answer")
	a.parse(&dec)
	if dec.err != nil && dec.err.Err != ErrUnknownField {
		return nil, 0, dec.err
	}
	return a, dec.r.Len(), dec.error()
}

// answerSections are the sections of an answer in wire order.
var answerSections = [...]struct {
	bit  RequestFlags
	name string
}{
	{RequestServerInfo, "SERVERINFO"}, {RequestTeams, "TEAMLIST"}, {RequestPlayers, "PLAYERLIST"},
	{RequestRules, "RULELIST"}, {RequestAddOns, "ADDONLIST"}, {RequestLimits, "LIMITLIST"},
}

// parse fills a. a.Request gets a section's bit once that section parsed
// completely, so after ErrUnknownField it names what is valid.
func (a *Answer) parse(d *decoder) {
	a.GameID = d.u16()
	req := RequestFlags(d.bitArray())
	colored := req&RequestColoredNames != 0
	a.Request = req & RequestColoredNames
	for _, s := range answerSections {
		if !d.ok() {
			return
		}
		if req&s.bit == 0 {
			continue
		}
		d.section = s.name
		switch s.bit {
		case RequestServerInfo:
			a.Info.parse(d, colored)
		case RequestTeams:
			a.Teams.parse(d, colored)
		case RequestPlayers:
			a.Players.parse(d, colored)
		case RequestRules:
			a.parseRules(d)
		case RequestAddOns:
			a.AddOns.parse(d)
		case RequestLimits:
			a.parseLimits(d)
		}
		if d.ok() {
			a.Request |= s.bit
		}
	}
	d.section = "answer"
	d.known(uint64(req), uint64(RequestAll))
}

func (s *ServerInfo) parse(d *decoder, colored bool) {
	s.Fields = infoFromWire(d.bitArray(), d.d)
	if !d.known(uint64(s.Fields), uint64(InfoAll)) {
		return
	}
	f := s.Fields
	if f&InfoGameName != 0 {
		s.GameName = d.text()
	}
	if f&InfoServerFlags != 0 {
		s.Flags = serverFlagsFromBits(d.bitArray(), d.d)
	}
	if d.d == V1 {
		s.parseV1(d, colored)
	} else {
		s.parseV091(d, colored)
	}
	if f&InfoPlayerCount != 0 {
		s.PlayerCount = d.varUint()
	}
	if f&InfoSlotMax != 0 {
		s.SlotMax = d.varUint()
	}
	if f&InfoBotCount != 0 {
		s.BotCount = d.varUint()
	}
	if f&InfoReservedSlots != 0 {
		s.ReservedSlots = d.varUint()
	}
}

func (s *ServerInfo) parseV091(d *decoder, colored bool) {
	f := s.Fields
	if f&InfoMod != 0 {
		s.Mod.Name = d.text()
		s.Mod.Dir = d.text()
	}
	if f&InfoConnectPort != 0 {
		s.ConnectPort = d.u16()
	}
	s.parseHostName(d, colored)
	if f&InfoMap != 0 {
		s.Map.Name = d.text()
		s.Map.File = d.text()
	}
	if f&InfoNextMap != 0 {
		s.NextMap.Name = d.text()
		s.NextMap.File = d.text()
	}
	s.parseGameTypeMode(d)
}

func (s *ServerInfo) parseV1(d *decoder, colored bool) {
	f := s.Fields
	s.parseHostName(d, colored)
	if f&InfoConnectPort != 0 {
		s.ConnectPort = d.u16()
	}
	if f&InfoMod != 0 {
		s.Mod.Name = d.text()
		if len(s.Mod.Name) != 0 {
			s.ModFields = ModFields(d.bitArray())
			m := s.ModFields
			if !d.known(uint64(m), uint64(ModAll)) {
				return
			}
			if m&ModIdentifier != 0 {
				s.Mod.Identifier = d.text()
			}
			if m&ModSize != 0 {
				s.Mod.Size = d.u32()
			}
			if m&ModVersion != 0 {
				s.Mod.Version = d.text()
			}
			if m&ModURL != 0 {
				s.Mod.URL = d.text()
			}
			if m&ModAuthor != 0 {
				s.Mod.Author = d.text()
			}
		}
	}
	s.parseGameTypeMode(d)
	if f&InfoMap != 0 {
		s.MapFields = MapFields(d.bitArray())
		if !d.known(uint64(s.MapFields), uint64(MapAll)) {
			return
		}
		s.Map.parseV1(d, s.MapFields)
		if f&InfoNextMap != 0 {
			s.NextMap.parseV1(d, s.MapFields)
		}
	}
}

func (s *ServerInfo) parseHostName(d *decoder, colored bool) {
	if s.Fields&InfoHostName != 0 {
		s.HostName = d.text()
		if colored {
			s.HostNameColor = d.colorInfo()
		}
	}
}

func (s *ServerInfo) parseGameTypeMode(d *decoder) {
	if s.Fields&InfoGameType != 0 {
		s.GameType = d.text()
	}
	if s.Fields&InfoGameMode != 0 {
		s.GameMode = d.text()
	}
}

func (m *MapInfo) parseV1(d *decoder, f MapFields) {
	m.Name = d.text()
	if f&MapFileName != 0 {
		m.File = d.text()
	}
	if f&MapFileSize != 0 {
		m.FileSize = d.u32()
	}
	if f&MapFileMD5 != 0 {
		copy(m.FileMD5[:], d.bytes(16))
	}
	if f&MapVersion != 0 {
		m.Version = d.text()
	}
	if f&MapURL != 0 {
		m.URL = d.text()
	}
	if f&MapAuthor != 0 {
		m.Author = d.text()
	}
}

// parseList reads a list count, the mask when the count is not 0, and
// the entries when the mask is not empty. It returns the count and mask.
func parseList[T any](d *decoder, known uint64, list *[]T, entry func(*T, uint64)) (int, uint64) {
	n := d.varUint()
	if !d.ok() || n == 0 {
		return 0, 0
	}
	mask := d.bitArray()
	if !d.known(mask, known) {
		return 0, mask
	}
	if mask == 0 {
		// Entries without fields take no bytes: keep the count only.
		if n > maxEmptyEntries {
			d.fail(ErrTooLarge)
			return 0, 0
		}
		return int(n), 0
	}
	// Every entry takes at least one byte.
	if uint64(n) > uint64(d.r.Len()) {
		d.fail(errCountTooBig)
		return 0, mask
	}
	for i := uint32(0); i < n && d.ok(); i++ {
		*list = append(*list, *new(T))
		entry(&(*list)[len(*list)-1], mask)
	}
	return int(n), mask
}

func (l *TeamList) parse(d *decoder, colored bool) {
	var mask uint64
	l.Count, mask = parseList(d, uint64(TeamAll), &l.Teams, func(t *Team, m uint64) { t.parse(d, TeamFields(m), colored) })
	l.Fields = TeamFields(mask)
}

func (l *PlayerList) parse(d *decoder, colored bool) {
	var mask uint64
	l.Count, mask = parseList(d, uint64(PlayerAll), &l.Players, func(p *Player, m uint64) { p.parse(d, PlayerFields(m), colored) })
	l.Fields = PlayerFields(mask)
}

func (l *AddOnList) parse(d *decoder) {
	var mask uint64
	l.Count, mask = parseList(d, uint64(AddOnAll), &l.AddOns, func(x *AddOn, m uint64) { x.parse(d, AddOnFields(m)) })
	l.Fields = AddOnFields(mask)
}

func (t *Team) parse(d *decoder, f TeamFields, colored bool) {
	if f&TeamName != 0 {
		t.Name = d.text()
		if colored {
			t.NameColor = d.colorInfo()
		}
	}
	if f&TeamScore != 0 {
		t.Score = d.varSint()
	}
	if f&TeamAveragePing != 0 {
		t.AveragePing = d.u16()
	}
	if f&TeamAverageLoss != 0 {
		t.AverageLoss = d.u16()
	}
	if f&TeamPlayerCount != 0 {
		t.PlayerCount = d.varUint()
	}
	if f&TeamColor != 0 {
		t.Color = d.u16()
	}
}

func (p *Player) parse(d *decoder, f PlayerFields, colored bool) {
	if f&PlayerFlags != 0 {
		p.Flags = PlayerState(d.bitArray())
	}
	if f&PlayerSlot != 0 {
		p.Slot = d.varUint()
	}
	if f&PlayerName != 0 {
		p.Name = d.text()
		if colored {
			p.NameColor = d.colorInfo()
		}
	}
	if f&PlayerTeam != 0 {
		p.Team = d.varSint()
	}
	if f&PlayerClass != 0 {
		p.Class = d.text()
	}
	if f&PlayerRace != 0 {
		p.Race = d.text()
	}
	if f&PlayerScore != 0 {
		p.Score = d.varSint()
	}
	if f&PlayerFrags != 0 {
		p.Frags = d.varSint()
	}
	if f&PlayerKills != 0 {
		p.Kills = d.varUint()
	}
	if f&PlayerDeaths != 0 {
		p.Deaths = d.varUint()
	}
	if f&PlayerSuicides != 0 {
		p.Suicides = d.varUint()
	}
	if f&PlayerTeamKills != 0 {
		p.TeamKills = d.varUint()
	}
	if f&PlayerID != 0 {
		p.ID = d.u32()
	}
	if f&PlayerGlobalID != 0 {
		p.GlobalID = d.text()
	}
	if f&PlayerPing != 0 {
		p.Ping = d.u16()
	}
	if f&PlayerLoss != 0 {
		p.Loss = d.u16()
	}
	if f&PlayerModel != 0 {
		p.Model = d.text()
	}
	if f&PlayerTime != 0 {
		p.Time = d.u16()
	}
	if f&PlayerAddress != 0 {
		if d.d == V1 {
			n := d.varUint()
			if d.ok() && uint64(n) > uint64(d.r.Len()) {
				d.fail(ErrTruncated)
				return
			}
			p.Address = d.bytes(int(n))
		} else {
			p.IPv4 = d.u32()
		}
	}
}

func (x *AddOn) parse(d *decoder, f AddOnFields) {
	if f&AddOnFlags != 0 {
		x.Flags = AddOnState(d.bitArray())
	}
	if f&AddOnShortName != 0 {
		x.ShortName = d.text()
	}
	if f&AddOnLongName != 0 {
		x.LongName = d.text()
	}
	if f&AddOnVersion != 0 {
		x.Version = d.text()
	}
}

func (a *Answer) parseRules(d *decoder) {
	n := d.count(minRuleLen)
	for i := 0; i < n && d.ok(); i++ {
		a.Rules = append(a.Rules, Rule{Key: d.text(), Value: d.text()})
	}
	if a.Rules == nil && d.ok() {
		a.Rules = []Rule{}
	}
}

func (a *Answer) parseLimits(d *decoder) {
	n := d.count(minLimitLen)
	for i := 0; i < n && d.ok(); i++ {
		v := d.bitArray()
		l := Limit{HasLeft: v&1 != 0, Type: LimitType(v >> 1 & 15), Limit: d.varUint()}
		if l.HasLeft {
			l.Left = d.varUint()
		}
		a.Limits = append(a.Limits, l)
	}
	if a.Limits == nil && d.ok() {
		a.Limits = []Limit{}
	}
}
