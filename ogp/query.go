package ogp

// Query is the body of a Default Query v1 request (spec 3.4): which
// sections to send and, per section, which fields. A mask is encoded only
// when its section is requested; Mod and Map are [V1] only.
type Query struct {
	Request RequestFlags
	Info    InfoFields   // with RequestServerInfo
	Mod     ModFields    // V1, with InfoMod
	Map     MapFields    // V1, with InfoMap
	Team    TeamFields   // with RequestTeams
	Player  PlayerFields // with RequestPlayers
	AddOn   AddOnFields  // with RequestAddOns
}

// QueryAll asks for everything this package knows in dialect d.
func QueryAll(d Dialect) Query {
	q := Query{Request: RequestAll, Info: InfoAll, Team: TeamAll, Player: PlayerAll, AddOn: AddOnAll}
	if d == V1 {
		q.Mod, q.Map = ModAll, MapAll
	}
	return q
}

// Append appends the query body in dialect d.
func (q *Query) Append(b []byte, d Dialect) ([]byte, error) {
	e := encoder{b: b, d: d}
	e.bitArray(uint64(q.Request))
	if q.Request&RequestServerInfo != 0 {
		e.bitArray(infoToWire(q.Info, d))
		if d == V1 && q.Info&InfoMod != 0 {
			e.bitArray(uint64(q.Mod))
		}
		if d == V1 && q.Info&InfoMap != 0 {
			e.bitArray(uint64(q.Map))
		}
	}
	if q.Request&RequestTeams != 0 {
		e.bitArray(uint64(q.Team))
	}
	if q.Request&RequestPlayers != 0 {
		e.bitArray(uint64(q.Player))
	}
	if q.Request&RequestAddOns != 0 {
		e.bitArray(uint64(q.AddOn))
	}
	return e.result()
}

// ParseQuery parses a Default Query v1 body. Unknown bits are kept (a
// server answers only what it knows); trailing bytes are ignored.
func ParseQuery(body []byte, d Dialect) (Query, error) {
	dec := newDecoder(body, d, "query")
	var q Query
	q.Request = RequestFlags(dec.bitArray())
	if q.Request&RequestServerInfo != 0 {
		q.Info = infoFromWire(dec.bitArray(), d)
		if d == V1 && q.Info&InfoMod != 0 {
			q.Mod = ModFields(dec.bitArray())
		}
		if d == V1 && q.Info&InfoMap != 0 {
			q.Map = MapFields(dec.bitArray())
		}
	}
	if q.Request&RequestTeams != 0 {
		q.Team = TeamFields(dec.bitArray())
	}
	if q.Request&RequestPlayers != 0 {
		q.Player = PlayerFields(dec.bitArray())
	}
	if q.Request&RequestAddOns != 0 {
		q.AddOn = AddOnFields(dec.bitArray())
	}
	if err := dec.error(); err != nil {
		return Query{}, err
	}
	return q, nil
}
