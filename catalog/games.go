package catalog

// Where the facts come from. A Game's Source covers its ports and
// protocols; AppIDSource its app ids; each Quirk, Console and Endpoint
// that comes from elsewhere says so.
const (
	gamedig           = "gamedig 5.3.3 lib/games.js (installed by .ci/install-peers)"
	gamedigDayZ       = "gamedig 5.3.3 lib/games.js (game port 2302) and protocols/dayz.js (query port 27016 when none is given)"
	gamedigNotes      = "gamedig 5.3.3 GAMES_LIST.md, games with additional notes"
	gdvalve           = "gamedig 5.3.3 protocols/valve.js, its AppId table"
	a2snotesgameid    = "a2s field notes §3.3: the EDF GameID of DayZ servers is 221100"
	a2snotesappid     = "a2s field notes §2: the AppIDs qstat misreads as GoldSource (HL2DM 320, DoD:S 300, L4D2 550)"
	a2snoteschallenge = "a2s field notes §3.2: Age of Chivalry (17510)"
	ogpnotes          = "ogp-and-ecosystem notes §1.2: Onset (Steam 1105810)"
	ogpNotes          = "ogp-and-ecosystem notes §1.2: Onset answered OGP on the game port - 1 (gamedig#152, GameQ#512)"
	ogpWSE            = "ogp-and-ecosystem notes §1.2: the WSE plugin's [ogp_server] port, 22222 by default"
	recalled          = "recalled from the game's Steam store page (store.steampowered.com/app/ID); not checked offline"
	a2sNotes33        = "a2s field notes §3.3 (A2S_INFO content quirks)"
	a2sNotes34        = "a2s field notes §3.4 (A2S_PLAYER quirks)"
	a2sNotes35        = "a2s field notes §3.5 (A2S_RULES quirks)"
	a2sNotes31        = "a2s field notes §3.1 (transport and framing quirks)"
	a2sNotes32        = "a2s field notes §3.2 (challenge quirks)"
	discoveryNotes    = "discovery field notes"
	mcNotes           = "gamedig 5.3.3 lib/games.js (minecraft 25565, mbe 19132) and the minecraft field notes"
	consoleNotes      = "console field notes, and the package's DefaultPort"
	rconNotes         = "rcon field notes, and package rcon's game profiles"
)

// a2s returns eps as A2S endpoints.
func a2s(eps ...Endpoint) []Endpoint {
	for i := range eps {
		eps[i].Protocol = "a2s"
	}
	return eps
}

// offset is an endpoint on the game port moved by n; fixed one on port p.
func offset(n int) Endpoint   { return Endpoint{Offset: n} }
func fixed(p uint16) Endpoint { return Endpoint{Port: p} }

// The consoles games share.
var (
	webrcon28016   = Console{Protocol: "webrcon", Port: 28016, Source: consoleNotes + " (webrcon: Rust's rcon.port)"}
	battleye       = Console{Protocol: "battleye", Port: 2305, Source: consoleNotes + " (battleye: where DayZ and Arma servers usually put BattlEye RCon; beserver.cfg's RConPort sets it)"}
	battleyeNoPort = Console{Protocol: "battleye", Source: consoleNotes + " (battleye: Reforger's BattlEye RCon port is set in its config; no usual one)"}
	telnet         = Console{Protocol: "telnet", Port: 8081, Source: consoleNotes + " (sdtd: serverconfig.xml's TelnetPort)"}
	rconARK        = Console{Protocol: "rcon", Dialect: "source", Profile: "ark", Port: 27020, Source: rconNotes + " (ARK's RCONPort 27020)"}
	rconConan      = Console{Protocol: "rcon", Dialect: "source", Profile: "conan", Port: 25575, Source: rconNotes + " (Conan Exiles' RconPort 25575)"}
	rconSquad      = Console{Protocol: "rcon", Dialect: "source", Profile: "squad", Port: 21114, Source: rconNotes + " (Squad's Rcon.cfg Port 21114)"}
	rconSrcds      = Console{Protocol: "rcon", Dialect: "source", Profile: "srcds", Port: 27015, Source: rconNotes + " (SRCDS serves RCON over TCP on its game port)"}
	rconMinecraft  = Console{Protocol: "rcon", Dialect: "minecraft", Port: 25575, Source: rconNotes + " (server.properties rcon.port 25575)"}
	rconPalworld   = Console{Protocol: "rcon", Dialect: "source", Profile: "palworld", Port: 25575, Source: rconNotes + " (PalWorldSettings.ini RCONPort 25575)"}
	restPalworld   = Console{Protocol: "palworld", Port: 8212, Source: consoleNotes + " (palworld: RESTAPIPort 8212)"}
)

// The quirks, each where the field notes or gamedig name it, and the
// a2stest profile that plays it.
var (
	qMCNoStatus = Quirk{ID: "closes-after-handshake", Protocol: "minecraft", Fake: "status-off", Source: mcNotes + " §1.3 (the decompiled ServerHandshakePacketListenerImpl)",
		Text: "with enable-status=false, or while starting, the server closes the connection right after the handshake: gsq reports it up, not answering status (no_status), not a timeout"}
	qMCProxyNoPong = Quirk{ID: "proxy-no-pong", Protocol: "minecraft", Fake: "velocity", Source: "issue 20 (latency \"from the status round trip when the server closes after the status (proxies do)\"); not checked against a running proxy",
		Text: "Velocity and BungeeCord close after the status instead of answering the ping: gsq keeps the status and times its round trip"}
	qMCHoverSample = Quirk{ID: "hover-text-sample", Protocol: "minecraft", Fake: "velocity", Source: mcNotes + " §1.4",
		Text: "plugins fill players.sample with lines of text and zero or made-up UUIDs: gsq marks them fake and keeps them out of the player list"}
	qMCQueryTokens = Quirk{ID: "query-token-per-port", Protocol: "mcquery", Fake: "vanilla", Source: mcNotes + " §2.3",
		Text: "Query's challenge token holds for the source address and port that earned it, 0 to 30 s: gsq asks from one socket and handshakes again after a silent stat"}
	qMCBedrockEmpty = Quirk{ID: "empty-pong-fields", Protocol: "bedrock", Fake: "bedrock-empty-version", Source: mcNotes + " §3",
		Text: "any field of the pong's status past the sixth may be missing or empty (mcstatus' fixture has no version): gsq leaves them out"}
	qAppIDInGameID = Quirk{ID: "appid-in-gameid", Protocol: "a2s", Fake: "dayz", Source: a2sNotes33,
		Text: "A2S_INFO's 16-bit AppID is 0; the real one is only in the EDF's GameID (gsq reads it there)"}
	qEmptyNames = Quirk{ID: "empty-player-names", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes34,
		Text: "A2S_PLAYER lists every player with an empty name: the count is right, the names are not there"}
	qUnsplit = Quirk{ID: "unsplit-large-replies", Protocol: "a2s", Fake: "oversized", Source: a2sNotes31,
		Text: "replies beyond 1400 bytes in one datagram, never split (gsq reads datagrams of up to 64 KiB)"}
	qQueueCounted = Quirk{ID: "queue-counted", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes33,
		Text: "players can exceed max_players: the queue and the reserved slots are counted (Squad 104/80)"}
	qCountsInKeywords = Quirk{ID: "counts-in-keywords", Protocol: "a2s", Fake: "rust", Source: a2sNotes33,
		Text: "player counts above 255 wrap in A2S_INFO's 8-bit fields; the real counts are in the keywords cp<N> and mp<N> (gsq reads them)"}
	qSDTDNames = Quirk{ID: "hidden-player-names", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes34 + "; " + gamedigNotes,
		Text: "A2S_PLAYER hides the players: empty names, index and score 0; their names come only from the telnet console's listplayers"}
	qDayZQueryPort = Quirk{ID: "query-port-27016", Protocol: "a2s", Fake: NotModelled, Source: gamedigDayZ,
		Text: "the query port is serverDZ.cfg's steamQueryPort, 27016 by default, whatever the game port"}
	qBinaryRules = Quirk{ID: "binary-rules", Protocol: "a2s", Fake: "dayz", Source: a2sNotes35,
		Text: "the mods are in binary A2S_RULES (Bohemia's Server Browser Protocol, escaped and chunked; gsq decodes them, package a2s/bohemia)"}
	qDayZKeywords = Quirk{ID: "keywords-metadata", Protocol: "a2s", Fake: "dayz", Source: a2sNotes33,
		Text: "server facts in the keywords: battleye, no3rd, external, privHive, lqs<queue>, etm/entm (time acceleration), the time of day"}
	qArmaBinaryRules = Quirk{ID: "binary-rules", Protocol: "a2s", Fake: "dayz", Source: a2sNotes35,
		Text: "binary A2S_RULES in Bohemia's Server Browser Protocol, as DayZ's (the dayz profile plays the format)"}
	qArmaKeywords = Quirk{ID: "keywords-encoding", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes33,
		Text: "the keywords encode the server's settings (bt,r182,n0,s7,...)"}
	qValheimPublic = Quirk{ID: "public-only", Protocol: "a2s", Fake: NotModelled, Source: gamedigNotes + " (Valheim)",
		Text: "answers queries only when started as a public server (-public 1)"}
	qValheimCrossplay = Quirk{ID: "crossplay-zero-players", Protocol: "a2s", Fake: NotModelled, Source: gamedigNotes + " (Valheim; gamedig#539)",
		Text: "crossplay servers report 0 players whatever the count"}
	qCS2Names = Quirk{ID: "blank-player-names", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes34 + "; " + gamedigNotes + " (cs2)",
		Text: "A2S_PLAYER has the right count and blank names; a server plugin (ServerListPlayersFix) restores them"}
	qCSGOMaxPlayers = Quirk{ID: "max-players-pseudo-player", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes34 + "; " + gamedigNotes + " (csgo)",
		Text: "with host_players_show 1 (the default), A2S_PLAYER lists one pseudo-player \"Max Players\" instead of the players; host_players_show 2 lists them"}
	qCSGORules = Quirk{ID: "no-rules", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes35,
		Text: "A2S_RULES is not answered since 1.32.3.0, unless a SourceMod rules fix is installed"}
	qBzip2Rules = Quirk{ID: "bzip2-rules", Protocol: "a2s", Fake: "bzip2-nosize", Source: a2sNotes31,
		Text: "some servers (old engine, v34) still send bzip2-compressed split rules"}
	qBzip2NoSize = Quirk{ID: "bzip2-no-size", Protocol: "a2s", Fake: "bzip2-nosize", Source: a2sNotes31,
		Text: "bzip2-compressed split replies without the Size field, a split of one fragment"}
	qShip = Quirk{ID: "ship-extras", Protocol: "a2s", Fake: "ship", Source: a2sNotes33 + "; " + a2sNotes34,
		Text: "A2S_INFO carries mode, witnesses and duration; A2S_PLAYER a trailing block of deaths and money"}
	qGoldSourceDual = Quirk{ID: "goldsource-dual-info", Protocol: "a2s", Fake: "goldsource-dual", Source: a2sNotes33,
		Text: "HLDS with dproto or ReUnion answers A2S_INFO twice: the GoldSource 'm' reply, then the Source 'I' one"}
	qGoldSourceSplit = Quirk{ID: "goldsource-split", Protocol: "a2s", Fake: "goldsource-dual", Source: a2sNotes35,
		Text: "A2S_RULES comes in the GoldSource split format"}
	qSvenMod = Quirk{ID: "inconsistent-mod-section", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes33,
		Text: "non-Steam servers answer 'm' with is_mod 1 but the mod section present or absent inconsistently"}
	qConanPlayers = Quirk{ID: "no-players", Protocol: "a2s", Fake: NotModelled, Source: gamedigNotes + " (conanexiles)",
		Text: "never answers A2S_PLAYER"}
	qSoulmaskVersion = Quirk{ID: "version-in-rules", Protocol: "a2s", Fake: NotModelled, Source: gamedigNotes + " (soulmask)",
		Text: "A2S_INFO's version is hard-coded 1.0.0.0; the real one is the rule NO_s"}
	qTheFront = Quirk{ID: "name-and-max-wrong", Protocol: "a2s", Fake: NotModelled, Source: gamedigNotes + " (thefront)",
		Text: "the name is a SteamID and max_players always 200"}
	qReforger = Quirk{ID: "a2s-opt-in", Protocol: "a2s", Fake: NotModelled, Source: gamedigNotes + " (armareforger)",
		Text: "answers A2S only when its config sets it up (the a2s section); no players"}
	qBattalionRules = Quirk{ID: "info-in-rules", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes35,
		Text: "the real name, counts and password are in the rules bat_name_s, bat_player_count_s, bat_max_players_i, bat_has_password_s"}
	qARKPlayers = Quirk{ID: "inflated-players", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes33,
		Text: "players counts the connecting players too (158 on a 70-slot server)"}
	qL4DPlayers = Quirk{ID: "players-list-mismatch", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes34,
		Text: "A2S_PLAYER can list far more entries than A2S_INFO's count (170 against 8)"}
	qL4D2RateLimit = Quirk{ID: "repeat-rate-limit", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes32,
		Text: "may deny replies to repeated packets from one address (its own rate limit)"}
	qRoR2Test = Quirk{ID: "bogus-rule", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes35,
		Text: "A2S_RULES holds a bogus rule \"Test\""}
	qVRisingPorts = Quirk{ID: "two-query-ports", Protocol: "a2s", Fake: NotModelled, Source: gamedig,
		Text: "the query port is the game port + 1 or + 15 by setup: gsq tries both"}
	qOldChallenge = Quirk{ID: "old-challenge", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes32,
		Text: "needs the old challenge request 0x57 (A2S_SERVERQUERY_GETCHALLENGE)"}
	qGModChallenge = Quirk{ID: "old-challenge-answered", Protocol: "a2s", Fake: NotModelled, Source: a2sNotes32,
		Text: "still answers the old challenge request 0x57, besides the challenge in replies"}
	qOutOfOrder = Quirk{ID: "split-out-of-order", Protocol: "a2s", Fake: "split-out-of-order", Source: a2sNotes31,
		Text: "split fragments arrive out of order (fragment 7 before 6 in a capture)"}
)

// games is the catalogue. The A2S games are gamedig's (its "valve",
// "dayz", "goldsrc" and "sdtd" entries: every one a query reaches, ids,
// names and ports as gamedig has them, but DayZ's fixed query port), with
// their quirks, app ids and consoles added from the sources named; then
// the games of the other protocols.
var games = []Game{
	{ID: "abioticfactor", Name: "Abiotic Factor", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{427410}, AppIDSource: recalled},
	{ID: "actionsource", Name: "Action: Source", Aliases: []string{"as"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "ahl", Name: "Action Half-Life", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "aoc", Name: "Age of Chivalry", Aliases: []string{"ageofchivalry"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{17510}, AppIDSource: a2snoteschallenge, Quirks: []Quirk{qOldChallenge}},
	{ID: "alienswarm", Name: "Alien Swarm", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{630}, AppIDSource: recalled},
	{ID: "ase", Name: "Ark: Survival Evolved", Aliases: []string{"arkse"}, GamePort: 7777, Query: a2s(fixed(27015)), Source: gamedig, AppIDs: []uint32{346110}, AppIDSource: recalled, Consoles: []Console{rconARK}, Quirks: []Quirk{qARKPlayers, qUnsplit, qAppIDInGameID}},
	{ID: "atlas", Name: "Atlas", GamePort: 5761, Query: a2s(offset(51800)), Source: gamedig, AppIDs: []uint32{834910}, AppIDSource: recalled, Consoles: []Console{rconARK}, Quirks: []Quirk{qAppIDInGameID}},
	{ID: "avorion", Name: "Avorion", GamePort: 27000, Query: a2s(offset(20)), Source: gamedig, AppIDs: []uint32{445220}, AppIDSource: recalled},
	{ID: "avp2010", Name: "Aliens vs. Predator 2010", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "americasarmy3", Name: "America's Army 3", GamePort: 8777, Query: a2s(fixed(27020)), Source: gamedig},
	{ID: "aapg", Name: "America's Army: Proving Grounds", Aliases: []string{"americasarmypg"}, GamePort: 8777, Query: a2s(fixed(27020)), Source: gamedig, Quirks: []Quirk{qQueueCounted}},
	{ID: "arma2", Name: "ARMA 2", GamePort: 2302, Query: a2s(offset(1)), Source: gamedig, AppIDs: []uint32{33900}, AppIDSource: recalled, Consoles: []Console{battleye}},
	{ID: "a2oa", Name: "ARMA 2: Operation Arrowhead", Aliases: []string{"arma2oa"}, GamePort: 2302, Query: a2s(offset(1)), Source: gamedig, AppIDs: []uint32{33930}, AppIDSource: recalled, Consoles: []Console{battleye}},
	{ID: "arma3", Name: "ARMA 3", GamePort: 2302, Query: a2s(offset(1)), Source: gamedig, AppIDs: []uint32{107410}, AppIDSource: recalled, Consoles: []Console{battleye}, Quirks: []Quirk{qArmaBinaryRules, qArmaKeywords, qAppIDInGameID, qUnsplit}},
	{ID: "armareforger", Name: "ARMA: Reforger", Aliases: []string{"armare"}, GamePort: 2001, Query: a2s(fixed(17777)), Source: gamedig, AppIDs: []uint32{1874880}, AppIDSource: recalled, Consoles: []Console{battleyeNoPort}, Quirks: []Quirk{qReforger}},
	{ID: "ballisticoverkill", Name: "Ballistic Overkill", GamePort: 27015, Query: a2s(offset(1)), Source: gamedig},
	{ID: "barotrauma", Name: "Barotrauma", GamePort: 27015, Query: a2s(offset(1)), Source: gamedig, AppIDs: []uint32{602960}, AppIDSource: recalled},
	{ID: "battalion1944", Name: "Battalion 1944", Aliases: []string{"bat1944"}, GamePort: 7777, Query: a2s(offset(3)), Source: gamedig, AppIDs: []uint32{489940}, AppIDSource: gdvalve, Quirks: []Quirk{qBattalionRules, qAppIDInGameID}},
	{ID: "blackmesa", Name: "Black Mesa", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{362890}, AppIDSource: recalled, Consoles: []Console{rconSrcds}, Quirks: []Quirk{qOutOfOrder}},
	{ID: "brainbread2", Name: "BrainBread 2", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "brainbread", Name: "BrainBread", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "breach", Name: "Breach", GamePort: 27016, Query: a2s(offset(0)), Source: gamedig},
	{ID: "brink", Name: "Brink", Query: a2s(offset(1)), Source: gamedig},
	{ID: "basedefense", Name: "Base Defense", Aliases: []string{"bd"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "bladesymphony", Name: "Blade Symphony", Aliases: []string{"bs"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "codbo3", Name: "Call of Duty: Black Ops 3", GamePort: 27017, Query: a2s(offset(0)), Source: gamedig},
	{ID: "codmw3", Name: "Call of Duty: Modern Warfare 3", Query: a2s(offset(2)), Source: gamedig},
	{ID: "cmw", Name: "Chivalry: Medieval Warfare", Aliases: []string{"chivalry"}, GamePort: 7777, Query: a2s(offset(2)), Source: gamedig, AppIDs: []uint32{219640}, AppIDSource: recalled},
	{ID: "codenamecure", Name: "Codename CURE", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "colonysurvival", Name: "Colony Survival", GamePort: 27004, Query: a2s(offset(0)), Source: gamedig},
	{ID: "conanexiles", Name: "Conan Exiles", GamePort: 7777, Query: a2s(fixed(27015)), Source: gamedig, AppIDs: []uint32{440900}, AppIDSource: recalled, Consoles: []Console{rconConan}, Quirks: []Quirk{qConanPlayers, qAppIDInGameID}},
	{ID: "contagion", Name: "Contagion", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "corekeeper", Name: "Core Keeper", GamePort: 1234, Query: a2s(offset(1)), Source: gamedig, AppIDs: []uint32{1621690}, AppIDSource: recalled},
	{ID: "counterstrike15", Name: "Counter-Strike 1.5", Aliases: []string{"cs15"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "counterstrike16", Name: "Counter-Strike 1.6", Aliases: []string{"cs16"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{10}, AppIDSource: recalled, Consoles: []Console{rconSrcds}, Quirks: []Quirk{qGoldSourceDual, qGoldSourceSplit}},
	{ID: "cscz", Name: "Counter-Strike: Condition Zero", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{80}, AppIDSource: recalled},
	{ID: "css", Name: "Counter-Strike: Source", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{240}, AppIDSource: gdvalve, Consoles: []Console{rconSrcds}, Quirks: []Quirk{qBzip2Rules}},
	{ID: "csgo", Name: "Counter-Strike: Global Offensive", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{730}, AppIDSource: gdvalve, Consoles: []Console{rconSrcds}, Quirks: []Quirk{qCSGOMaxPlayers, qCSGORules}},
	{ID: "counterstrike2", Name: "Counter-Strike 2", Aliases: []string{"cs2"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{730}, AppIDSource: gdvalve, Consoles: []Console{rconSrcds}, Quirks: []Quirk{qCS2Names}},
	{ID: "creativerse", Name: "Creativerse", GamePort: 26900, Query: a2s(offset(1)), Source: gamedig},
	{ID: "dab", Name: "Double Action: Boogaloo", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "dmomam", Name: "Dark Messiah of Might and Magic", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "dayofdragons", Name: "Day of Dragons", GamePort: 7777, Query: a2s(fixed(27015)), Source: gamedig},
	{ID: "dow", Name: "Days of War", Aliases: []string{"daysofwar"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "dayz", Name: "DayZ", GamePort: 2302, Query: a2s(fixed(27016)), Source: gamedigDayZ, AppIDs: []uint32{221100}, AppIDSource: a2snotesgameid, Consoles: []Console{battleye}, Quirks: []Quirk{qDayZQueryPort, qBinaryRules, qDayZKeywords, qAppIDInGameID, qUnsplit}},
	{ID: "dayzmod", Name: "DayZ Mod", GamePort: 2302, Query: a2s(offset(1)), Source: gamedig, Consoles: []Console{battleye}},
	{ID: "ddd", Name: "Dino D-Day", Aliases: []string{"dinodday"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{70000}, AppIDSource: recalled},
	{ID: "deathmatchclassic", Name: "Deathmatch Classic", Aliases: []string{"dmc"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{40}, AppIDSource: recalled},
	{ID: "dal", Name: "Dark and Light", Aliases: []string{"dnl"}, GamePort: 7777, Query: a2s(fixed(27015)), Source: gamedig, Quirks: []Quirk{qEmptyNames}},
	{ID: "dod", Name: "Day of Defeat", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{30}, AppIDSource: recalled},
	{ID: "dods", Name: "Day of Defeat: Source", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{300}, AppIDSource: a2snotesappid, Consoles: []Console{rconSrcds}},
	{ID: "doi", Name: "Day of Infamy", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{447820}, AppIDSource: recalled, Consoles: []Console{rconSrcds}},
	{ID: "dota2", Name: "Dota 2", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{570}, AppIDSource: recalled},
	{ID: "dst", Name: "Don't Starve Together", GamePort: 10999, Query: a2s(fixed(27016)), Source: gamedig, AppIDs: []uint32{322330}, AppIDSource: recalled},
	{ID: "dystopia", Name: "Dystopia", Aliases: []string{"dys"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "empiresmod", Name: "Empires Mod", Aliases: []string{"em"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "egs", Name: "Empyrion - Galactic Survival", Aliases: []string{"empyrion"}, GamePort: 30000, Query: a2s(offset(1)), Source: gamedig, AppIDs: []uint32{383120}, AppIDSource: recalled, Quirks: []Quirk{qEmptyNames}},
	{ID: "enshrouded", Name: "enshrouded", GamePort: 15636, Query: a2s(fixed(15637)), Source: gamedig, AppIDs: []uint32{1203620}, AppIDSource: recalled},
	{ID: "ets2", Name: "Euro Truck Simulator 2", GamePort: 27015, Query: a2s(offset(1)), Source: gamedig, AppIDs: []uint32{227300}, AppIDSource: recalled},
	{ID: "exfil", Name: "Exfil", GamePort: 7777, Query: a2s(fixed(27015)), Source: gamedig},
	{ID: "fof", Name: "Fistful of Frags", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{265630}, AppIDSource: recalled},
	{ID: "foundry", Name: "FOUNDRY", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "fortressforever", Name: "Fortress Forever", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{253530}, AppIDSource: recalled, Quirks: []Quirk{qBzip2NoSize}},
	{ID: "garrysmod", Name: "Garry's Mod", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{4000}, AppIDSource: recalled, Consoles: []Console{rconSrcds}, Quirks: []Quirk{qGModChallenge}},
	{ID: "goldeneyesource", Name: "GoldenEye: Source", Aliases: []string{"ges"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "groundbreach", Name: "Ground Breach", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "gunmanchronicles", Name: "Gunman Chronicles", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "hld", Name: "Half-Life Deathmatch", Aliases: []string{"hldm"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{70}, AppIDSource: recalled},
	{ID: "hlds", Name: "Half-Life Deathmatch: Source", Aliases: []string{"hldms"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{360}, AppIDSource: recalled},
	{ID: "hlof", Name: "Half-Life: Opposing Force", Aliases: []string{"hlopfor"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{50}, AppIDSource: recalled},
	{ID: "hl2d", Name: "Half-Life 2: Deathmatch", Aliases: []string{"hl2dm"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{320}, AppIDSource: a2snotesappid, Consoles: []Console{rconSrcds}},
	{ID: "thehidden", Name: "The Hidden", Aliases: []string{"hidden"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "hll", Name: "Hell Let Loose", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{686810}, AppIDSource: recalled, Quirks: []Quirk{qQueueCounted, qUnsplit, qAppIDInGameID}},
	{ID: "homefront", Name: "Homefront", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "hurtworld", Name: "Hurtworld", GamePort: 12871, Query: a2s(fixed(12881)), Source: gamedig},
	{ID: "icarus", Name: "Icarus", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{1149460}, AppIDSource: recalled},
	{ID: "insurgency", Name: "Insurgency", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{222880}, AppIDSource: recalled, Consoles: []Console{rconSrcds}, Quirks: []Quirk{qAppIDInGameID}},
	{ID: "imic", Name: "Insurgency: Modern Infantry Combat", Aliases: []string{"insurgencymic"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "insurgencysandstorm", Name: "Insurgency: Sandstorm", GamePort: 27015, Query: a2s(offset(1)), Source: gamedig, AppIDs: []uint32{581320}, AppIDSource: recalled, Quirks: []Quirk{qAppIDInGameID}},
	{ID: "theisle", Name: "The Isle", Aliases: []string{"isle"}, GamePort: 7707, Query: a2s(offset(1)), Source: gamedig},
	{ID: "jc3m", Name: "Just Cause 3 - Multiplayer", Aliases: []string{"jc3mp"}, GamePort: 4200, Query: a2s(offset(1)), Source: gamedig},
	{ID: "killingfloor2", Name: "Killing Floor 2", GamePort: 7777, Query: a2s(fixed(27015)), Source: gamedig, AppIDs: []uint32{232090}, AppIDSource: recalled, Quirks: []Quirk{qQueueCounted, qAppIDInGameID}},
	{ID: "kreedzclimbing", Name: "Kreedz Climbing", Aliases: []string{"kzmod"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "l4d", Name: "Left 4 Dead", Aliases: []string{"left4dead"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{500}, AppIDSource: recalled, Consoles: []Console{rconSrcds}, Quirks: []Quirk{qL4DPlayers}},
	{ID: "l4d2", Name: "Left 4 Dead 2", Aliases: []string{"left4dead2"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{550}, AppIDSource: a2snotesappid, Consoles: []Console{rconSrcds}, Quirks: []Quirk{qL4D2RateLimit}},
	{ID: "medievalengineers", Name: "Medieval Engineers", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "moe", Name: "Myth of Empires", Query: a2s(fixed(12888)), Source: gamedig},
	{ID: "mnc", Name: "Monday Night Combat", GamePort: 7777, Query: a2s(fixed(27016)), Source: gamedig},
	{ID: "mordhau", Name: "Mordhau", GamePort: 7777, Query: a2s(fixed(27015)), Source: gamedig, AppIDs: []uint32{629760}, AppIDSource: recalled, Quirks: []Quirk{qAppIDInGameID}},
	{ID: "nmrih", Name: "No More Room in Hell", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{224260}, AppIDSource: recalled, Consoles: []Console{rconSrcds}},
	{ID: "naturalselection", Name: "Natural Selection", Aliases: []string{"ns"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "naturalselection2", Name: "Natural Selection 2", Aliases: []string{"ns2"}, Query: a2s(offset(1)), Source: gamedig, AppIDs: []uint32{4920}, AppIDSource: recalled},
	{ID: "nla", Name: "Nova-Life: Amboise", Query: a2s(fixed(27015)), Source: gamedig},
	{ID: "nucleardawn", Name: "Nuclear Dawn", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{17710}, AppIDSource: recalled},
	{ID: "ohd", Name: "Operation: Harsh Doorstop", GamePort: 7777, Query: a2s(fixed(27005)), Source: gamedig},
	{ID: "onset", Name: "Onset", GamePort: 7777, Query: append(a2s(offset(-1)), Endpoint{Protocol: "ogp", Offset: -1, Source: ogpNotes}), Source: gamedig, AppIDs: []uint32{1105810}, AppIDSource: ogpnotes},
	{ID: "pvak2", Name: "Pirates, Vikings, and Knights II", Aliases: []string{"pvkii"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{17570}, AppIDSource: recalled},
	{ID: "pixark", Name: "PixARK", GamePort: 7777, Query: a2s(fixed(27015)), Source: gamedig},
	{ID: "postscriptum", Name: "Post Scriptum", Aliases: []string{"ps"}, GamePort: 10037, Query: a2s(offset(0)), Source: gamedig, Quirks: []Quirk{qQueueCounted, qUnsplit}},
	{ID: "pce", Name: "Primal Carnage: Extinction", Aliases: []string{"primalcarnage"}, GamePort: 7777, Query: a2s(fixed(27015)), Source: gamedig},
	{ID: "projectcars", Name: "Project Cars", Aliases: []string{"pc"}, GamePort: 27015, Query: a2s(offset(1)), Source: gamedig},
	{ID: "projectcars2", Name: "Project Cars 2", Aliases: []string{"pc2"}, GamePort: 27015, Query: a2s(offset(1)), Source: gamedig},
	{ID: "projectzomboid", Name: "Project Zomboid", Aliases: []string{"przomboid"}, GamePort: 16261, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{108600}, AppIDSource: recalled, Quirks: []Quirk{qAppIDInGameID}},
	{ID: "quakelive", Name: "Quake Live", GamePort: 27960, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{282440}, AppIDSource: recalled},
	{ID: "rdkf", Name: "Rag Doll Kung Fu", Aliases: []string{"ragdollkungfu"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "redorchestra2", Name: "Red Orchestra 2", GamePort: 7777, Query: a2s(fixed(27015)), Source: gamedig, AppIDs: []uint32{35450}, AppIDSource: recalled, Quirks: []Quirk{qQueueCounted, qUnsplit}},
	{ID: "rfactor2", Name: "rFactor 2", Query: a2s(fixed(64299)), Source: gamedig},
	{ID: "ricochet", Name: "Ricochet", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{60}, AppIDSource: recalled},
	{ID: "risingworld", Name: "Rising World", GamePort: 4255, Query: a2s(offset(-1)), Source: gamedig},
	{ID: "ror2", Name: "Risk of Rain 2", GamePort: 27015, Query: a2s(offset(1)), Source: gamedig, AppIDs: []uint32{632360}, AppIDSource: recalled, Quirks: []Quirk{qRoR2Test}},
	{ID: "rs2v", Name: "Rising Storm 2: Vietnam", Aliases: []string{"rs2"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{418460}, AppIDSource: recalled, Quirks: []Quirk{qQueueCounted}},
	{ID: "rust", Name: "Rust", GamePort: 28015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{252490}, AppIDSource: gdvalve, Consoles: []Console{webrcon28016}, Quirks: []Quirk{qCountsInKeywords, qAppIDInGameID, qEmptyNames, qUnsplit}},
	{ID: "sdtd", Name: "7 Days to Die", Aliases: []string{"7d2d"}, GamePort: 26900, Query: a2s(offset(1)), Source: gamedig, AppIDs: []uint32{251570}, AppIDSource: recalled, Consoles: []Console{telnet}, Quirks: []Quirk{qSDTDNames, qAppIDInGameID}},
	{ID: "spaceengineers", Name: "Space Engineers", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{244850}, AppIDSource: recalled, Quirks: []Quirk{qAppIDInGameID}},
	{ID: "shatteredhorizon", Name: "Shattered Horizon", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "theship", Name: "The Ship", Aliases: []string{"ship"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{2400}, AppIDSource: gdvalve, Quirks: []Quirk{qShip}},
	{ID: "sinepisodes", Name: "SiN Episodes", Aliases: []string{"sinep"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "sotf", Name: "Sons Of The Forest", Aliases: []string{"sonsoftheforest"}, GamePort: 8766, Query: a2s(fixed(27016)), Source: gamedig, AppIDs: []uint32{1326470}, AppIDSource: recalled},
	{ID: "soulmask", Name: "Soulmask", GamePort: 8777, Query: a2s(fixed(27015)), Source: gamedig, AppIDs: []uint32{2646460}, AppIDSource: gdvalve, Quirks: []Quirk{qSoulmaskVersion}},
	{ID: "stn", Name: "Survive the Nights", GamePort: 7950, Query: a2s(offset(1)), Source: gamedig},
	{ID: "starbound", Name: "Starbound", GamePort: 21025, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{211820}, AppIDSource: recalled, Quirks: []Quirk{qOldChallenge}},
	{ID: "suicidesurvival", Name: "Suicide Survival", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "svencoop", Name: "Sven Coop", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{225840}, AppIDSource: recalled, Quirks: []Quirk{qSvenMod}},
	{ID: "synergy", Name: "Synergy", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{17520}, AppIDSource: recalled},
	{ID: "tfc", Name: "Team Fortress Classic", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{20}, AppIDSource: recalled},
	{ID: "teamfortress2", Name: "Team Fortress 2", Aliases: []string{"tf2"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{440}, AppIDSource: recalled, Consoles: []Console{rconSrcds}},
	{ID: "theforest", Name: "The Forest", Aliases: []string{"forrest"}, GamePort: 27015, Query: a2s(offset(1)), Source: gamedig, AppIDs: []uint32{242760}, AppIDSource: recalled},
	{ID: "thefront", Name: "The Front", Query: a2s(fixed(27015)), Source: gamedig, Quirks: []Quirk{qTheFront}},
	{ID: "towerunite", Name: "Tower Unite", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "thespecialists", Name: "The Specialists", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "unturned", Name: "unturned", GamePort: 27015, Query: a2s(offset(1)), Source: gamedig, AppIDs: []uint32{304930}, AppIDSource: recalled, Quirks: []Quirk{qAppIDInGameID}},
	{ID: "valheim", Name: "Valheim", GamePort: 2456, Query: a2s(offset(1)), Source: gamedig, AppIDs: []uint32{892970}, AppIDSource: recalled, Quirks: []Quirk{qValheimPublic, qValheimCrossplay, qEmptyNames, qAppIDInGameID}},
	{ID: "vrising", Name: "V Rising", GamePort: 27015, Query: a2s(offset(1), offset(15)), Source: gamedig, AppIDs: []uint32{1604030}, AppIDSource: recalled, Quirks: []Quirk{qAppIDInGameID, qVRisingPorts}},
	{ID: "vampireslayer", Name: "Vampire Slayer", Aliases: []string{"vs"}, GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "wurmunlimited", Name: "Wurm Unlimited", Aliases: []string{"wurm"}, GamePort: 3724, Query: a2s(fixed(27016)), Source: gamedig, Quirks: []Quirk{qEmptyNames}},
	{ID: "zombiemaster", Name: "Zombie Master", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig},
	{ID: "zps", Name: "Zombie Panic: Source", GamePort: 27015, Query: a2s(offset(0)), Source: gamedig, AppIDs: []uint32{17500}, AppIDSource: recalled},

	// The Minecraft family.
	{ID: "minecraft", Name: "Minecraft (Java Edition)", GamePort: 25565, Source: mcNotes,
		Query:    []Endpoint{{Protocol: "minecraft"}, {Protocol: "mcquery", Source: mcNotes + " (server.properties query.port defaults to the game port; enable-query must be true)"}},
		Consoles: []Console{rconMinecraft}, Quirks: []Quirk{qMCNoStatus, qMCProxyNoPong, qMCHoverSample, qMCQueryTokens}},
	{ID: "mbe", Aliases: []string{"minecraftbe"}, Name: "Minecraft: Bedrock Edition", GamePort: 19132, Source: mcNotes,
		Query: []Endpoint{{Protocol: "bedrock"}}, Quirks: []Quirk{qMCBedrockEmpty}},

	// OGP.
	{ID: "mbwarband", Name: "Mount & Blade: Warband (with the WSE plugin)", Source: ogpWSE,
		Query: []Endpoint{{Protocol: "ogp", Port: 22222}}, AppIDs: []uint32{48700}, AppIDSource: recalled},

	// Satisfactory and FiveM, each with a protocol of its own.
	{ID: "satisfactory", Name: "Satisfactory", GamePort: 7777, Source: gamedig + "; discovery field notes §2.1 (the Lightweight Query API answers on the game port)",
		Query: []Endpoint{{Protocol: "satisfactory"}}, AppIDs: []uint32{526870}, AppIDSource: recalled,
		Quirks: []Quirk{{ID: "players-need-login", Protocol: "satisfactory", Fake: NotModelled, Source: "discovery field notes §2.2; gamedig 5.3.3 protocols/satisfactory.js",
			Text: "the UDP query tells the state and the name only; the player count needs the HTTPS API and a login, which gsq does not do"}}},
	{ID: "gta5f", Aliases: []string{"fivem"}, Name: "Grand Theft Auto V - FiveM", GamePort: 30120, Source: gamedig + "; discovery field notes §4",
		Query: []Endpoint{{Protocol: "fivem"}},
		Quirks: []Quirk{{ID: "players-json-disabled", Protocol: "fivem", Fake: "players-disabled", Source: "discovery field notes §4 (gamedig 5.3.0, #674); " + gamedigNotes + " (gta5f)",
			Text: "/players.json is often disabled (404), and lists identifiers only with sv_exposePlayerIdentifiersInHttpEndpoint 1"}}},
	{ID: "rdr2r", Aliases: []string{"redm"}, Name: "Red Dead Redemption 2 - RedM", GamePort: 30120, Source: gamedig,
		Query: []Endpoint{{Protocol: "fivem"}}},

	// The consoles only: no public query.
	{ID: "palworld", Name: "Palworld", Source: gamedig + " (its REST port, 8212); console field notes", AppIDs: []uint32{1623730}, AppIDSource: recalled,
		Consoles:    []Console{restPalworld, rconPalworld},
		Unqueryable: "Palworld answers no public query (no A2S: a2s field notes §3.3); its REST API answers status with the admin password only: use gsq rcon (the palworld console)"},

	// Epic Online Services: credentials gsq does not ship.
	{ID: "asa", Name: "Ark: Survival Ascended", GamePort: 7777, Source: gamedig + "; discovery field notes §3",
		Consoles:    []Console{rconARK},
		Unqueryable: "ARK: Survival Ascended has no A2S; its servers are listed by Epic Online Services, which answers only clients holding credentials extracted from the game (gamedig ships them in asa.js). gsq does not ship them: gsq rcon reaches the server's RCON"},
	{ID: "squad", Name: "Squad", GamePort: 7787, Source: gamedig + "; discovery field notes §3 (gamedig#545, PR #731)", AppIDs: []uint32{393380}, AppIDSource: gdvalve,
		Consoles:    []Console{rconSquad},
		Unqueryable: "Squad moved from A2S to Epic Online Services, which answers only clients holding credentials extracted from the game (gamedig ships them in squad.js). gsq does not ship them: gsq rcon reaches the server's RCON"},
	{ID: "tie", Name: "The Isle Evrima", GamePort: 7777, Source: gamedig + "; a2s field notes §3.3",
		Unqueryable: "The Isle Evrima answers no A2S (a2s field notes §3.3); gamedig asks it with a protocol of its own (theisleevrima) that gsq does not speak"},
}
