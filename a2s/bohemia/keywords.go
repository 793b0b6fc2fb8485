package bohemia

import (
	"strconv"
	"strings"
)

// DayZTags are the server facts DayZ packs into the A2S_INFO keywords,
// such as "battleye,no3rd,external,privHive,shard123,lqs0,etm4.000000,
// entm8.000000,mod,isDLC,12:34".
type DayZTags struct {
	BattlEye    bool   // "battleye"
	FirstPerson bool   // "no3rd": third-person view is off
	External    bool   // "external": a community server
	PrivateHive bool   // "privHive": characters stay on this server
	Mods        bool   // "mod": the server runs mods
	DLC         bool   // "isDLC": the server needs a DLC
	Shard       string // "shard<ID>"
	// Queue is the login queue length ("lqs<N>"); -1 if not sent.
	Queue int
	// DayAcceleration and NightAcceleration are the time multipliers
	// ("etm<X>" and "entm<X>"); 0 if not sent.
	DayAcceleration   float64
	NightAcceleration float64
	Time              string // the in-game time, "HH:MM"
	// Other holds the tags not recognised, in order.
	Other []string
}

// Official reports a server run by the game's publisher: neither a
// community server nor a private hive.
func (t DayZTags) Official() bool { return !t.External && !t.PrivateHive }

// ParseDayZTags reads DayZ's keywords. Tags it does not know, or whose
// value does not parse, go to Other.
func ParseDayZTags(keywords string) DayZTags {
	t := DayZTags{Queue: -1}
	for _, tag := range splitTags(keywords) {
		ok := true
		switch {
		case tag == "battleye":
			t.BattlEye = true
		case tag == "no3rd":
			t.FirstPerson = true
		case tag == "external":
			t.External = true
		case tag == "privHive":
			t.PrivateHive = true
		case tag == "mod":
			t.Mods = true
		case tag == "isDLC":
			t.DLC = true
		case strings.HasPrefix(tag, "shard"):
			t.Shard = tag[len("shard"):]
		case strings.HasPrefix(tag, "lqs"):
			ok = setInt(&t.Queue, tag[len("lqs"):])
		case strings.HasPrefix(tag, "entm"):
			ok = setFloat(&t.NightAcceleration, tag[len("entm"):])
		case strings.HasPrefix(tag, "etm"):
			ok = setFloat(&t.DayAcceleration, tag[len("etm"):])
		case isClock(tag):
			t.Time = tag
		default:
			ok = false
		}
		if !ok {
			t.Other = append(t.Other, tag)
		}
	}
	return t
}

// Arma3Tags are the server facts Arma 3 packs into the A2S_INFO keywords,
// one letter then a value per tag, such as "bt,r210,n150,s7,i2,mf,lf,vt,
// dt,tcoop,g65545,h1a2b3c4d,f0,c0-52,pw,e0,j0,k0,".
type Arma3Tags struct {
	BattlEye         bool   // b
	RequiredVersion  int    // r: 210 is version 2.10; 0 if not sent
	RequiredBuild    int    // n
	State            int    // s: 7 is playing (see Arma3State)
	Difficulty       int    // i: 0 recruit ... 3 custom
	EqualModRequired bool   // m
	Locked           bool   // l
	VerifySignatures bool   // v
	Dedicated        bool   // d
	GameType         string // t: "coop", "ctf", "rpg"...
	Language         int    // g: a Windows language ID
	Coordinates      string // c: longitude and latitude, as sent ("0-52")
	Platform         string // p: "w" Windows, "l" Linux
	ContentHash      string // h
	Country          string // o
	TimeLeft         int    // e: minutes
	Param1, Param2   int    // j, k
	FilePatching     int    // f: 0 none, 1 headless clients, 2 everyone
	Island           string // y
	// Other holds the tags not recognised, in order.
	Other []string
}

// Arma3State names the server states of the "s" tag.
var Arma3State = []string{"none", "selecting mission", "editing mission", "assigning roles",
	"sending mission", "loading game", "briefing", "playing", "debriefing", "mission aborted"}

// ParseArma3Tags reads Arma 3's keywords. Tags it does not know, or
// whose value does not parse, go to Other.
func ParseArma3Tags(keywords string) Arma3Tags {
	var t Arma3Tags
	for _, tag := range splitTags(keywords) {
		v, ok := tag[1:], true
		switch tag[0] {
		case 'b':
			ok = setFlag(&t.BattlEye, v)
		case 'r':
			ok = setInt(&t.RequiredVersion, v)
		case 'n':
			ok = setInt(&t.RequiredBuild, v)
		case 's':
			ok = setInt(&t.State, v)
		case 'i':
			ok = setInt(&t.Difficulty, v)
		case 'm':
			ok = setFlag(&t.EqualModRequired, v)
		case 'l':
			ok = setFlag(&t.Locked, v)
		case 'v':
			ok = setFlag(&t.VerifySignatures, v)
		case 'd':
			ok = setFlag(&t.Dedicated, v)
		case 't':
			t.GameType = v
		case 'g':
			ok = setInt(&t.Language, v)
		case 'c':
			t.Coordinates = v
		case 'p':
			t.Platform = v
		case 'h':
			t.ContentHash = v
		case 'o':
			t.Country = v
		case 'e':
			ok = setInt(&t.TimeLeft, v)
		case 'j':
			ok = setInt(&t.Param1, v)
		case 'k':
			ok = setInt(&t.Param2, v)
		case 'f':
			ok = setInt(&t.FilePatching, v)
		case 'y':
			t.Island = v
		default:
			ok = false
		}
		if !ok {
			t.Other = append(t.Other, tag)
		}
	}
	return t
}

// splitTags splits keywords at commas, dropping empty tags.
func splitTags(keywords string) []string {
	var tags []string
	for tag := range strings.SplitSeq(keywords, ",") {
		if tag = strings.TrimSpace(tag); tag != "" {
			tags = append(tags, tag)
		}
	}
	return tags
}

// setInt stores the integer s holds in *dst, if it holds one.
func setInt(dst *int, s string) bool {
	n, err := strconv.Atoi(s)
	if err == nil {
		*dst = n
	}
	return err == nil
}

// setFloat stores the number s holds in *dst, if it holds one.
func setFloat(dst *float64, s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	if err == nil {
		*dst = f
	}
	return err == nil
}

// setFlag stores Arma's "t" or "f" in *dst.
func setFlag(dst *bool, s string) bool {
	if s != "t" && s != "f" {
		return false
	}
	*dst = s == "t"
	return true
}

// isClock reports whether s looks like "HH:MM".
func isClock(s string) bool {
	h, m, ok := strings.Cut(s, ":")
	if !ok {
		return false
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	return err1 == nil && err2 == nil && hh >= 0 && hh < 24 && mm >= 0 && mm < 60
}
