package rcontest

import (
	"fmt"
	"strings"
)

// Profile selects which real server a [Server] imitates. Every profile
// is taken from shared/notes/rcon-field-notes.md; the section is cited on
// each constant. The zero value is [SRCDS].
type Profile int

// Profiles.
const (
	// SRCDS is classic Source (CS:GO, TF2, L4D2; §1.1, §4): an empty
	// RESPONSE_VALUE before every AUTH_RESPONSE, in the same write;
	// output split every 4086 bytes; an empty RESPONSE_VALUE is mirrored,
	// then followed by the extra packet with body 00 00 00 01 00 00 00;
	// a command before login gets an empty RESPONSE_VALUE.
	SRCDS Profile = iota
	// CS2 is Counter-Strike 2 (§1.1, §1.3): no packet before
	// AUTH_RESPONSE and no splitting, so long output comes as one packet
	// above 4096 bytes. Probes are mirrored as on SRCDS (unverified on
	// real CS2).
	CS2
	// Minecraft is vanilla Minecraft Java's RconClient (§1.2): each
	// request must be exactly one read of at most 1460 bytes, so a
	// request split over two reads, or two requests coalesced into one
	// read, make it drop the connection; no packet before AUTH_RESPONSE;
	// output cut every 4096 UTF-16 units, a surrogate pair cut in two
	// becoming '?' as Java encodes it; unknown request types answered
	// "Unknown request <hex>"; anything before login answered with the -1
	// login failure; a wrong password leaves the connection open.
	Minecraft
	// Factorio answers each command with exactly one packet and ignores
	// empty commands and RESPONSE_VALUE probes, so probing clients hang
	// (§4 Factorio). Login as SRCDS (unverified).
	Factorio
	// Palworld answers every command with request id 0, in one packet;
	// probes are ignored (§4 Palworld). Login replies carry the real id.
	// Palworld's 50-byte line truncation is not imitated.
	Palworld
	// Conan is an old Conan Exiles server: every reply, the login
	// included, carries id 42 (§3 gorcon CHANGELOG 1.2.0, §4 Conan).
	// Otherwise as SRCDS.
	Conan
	// Squad pushes an unsolicited type-1 chat packet before each answer,
	// sends the probe's extra packet with a size field of 10 although 17
	// bytes follow, and closes the connection on a wrong password instead
	// of answering -1 (§3 SquadJS, §4 Squad). Otherwise as SRCDS.
	Squad
	// ARK answers commands without output with "Server received, But no
	// response!!" and never answers a wrong password, keeping the
	// connection open (§4 ARK). Otherwise as SRCDS.
	ARK
	// RustLegacy is Rust with +rcon.web 0 (§3 gorcon, §4 Rust): each
	// command is preceded by a type-4 console packet with id -1; "say"
	// gets no reply with the request id, only an id -1 console line;
	// other commands get one packet; probes are not mirrored.
	RustLegacy
)

var profileNames = [...]string{
	SRCDS:      "srcds",
	CS2:        "cs2",
	Minecraft:  "minecraft",
	Factorio:   "factorio",
	Palworld:   "palworld",
	Conan:      "conan",
	Squad:      "squad",
	ARK:        "ark",
	RustLegacy: "rust-legacy",
}

// String returns the profile's name as accepted by [ParseProfile].
func (p Profile) String() string {
	if p >= 0 && int(p) < len(profileNames) {
		return profileNames[p]
	}
	return fmt.Sprintf("Profile(%d)", int(p))
}

// Profiles returns every profile.
func Profiles() []Profile {
	ps := make([]Profile, len(profileNames))
	for i := range ps {
		ps[i] = Profile(i)
	}
	return ps
}

// ParseProfile parses a profile name, case-insensitively.
func ParseProfile(name string) (Profile, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	for i, n := range profileNames {
		if n == name {
			return Profile(i), nil
		}
	}
	return 0, fmt.Errorf("rcontest: unknown profile %q (known: %s)", name, strings.Join(profileNames[:], ", "))
}

// probeMode is how a profile answers an empty RESPONSE_VALUE.
type probeMode int

const (
	probeMirror          probeMode = iota // empty mirror + extra packet
	probeMirrorMalformed                  // as probeMirror, extra packet's size field says 10
	probeUnknownRequest                   // "Unknown request 0"
	probeIgnore                           // no answer
)

// badPasswordMode is how a profile answers a wrong password.
type badPasswordMode int

const (
	badPasswordMinusOne badPasswordMode = iota // AUTH_RESPONSE id -1
	badPasswordClose                           // close the connection
	badPasswordSilent                          // no answer, connection kept
)

// traits is what a profile does, field by field.
type traits struct {
	preAuthEmpty  bool            // empty RESPONSE_VALUE before AUTH_RESPONSE
	splitBytes    int             // >0: split output at this many bytes
	vanillaSplit  bool            // split at 4096 UTF-16 units like Java
	singleRead    bool            // Minecraft's one-read request parser
	probe         probeMode       // answer to an empty RESPONSE_VALUE
	badPassword   badPasswordMode // answer to a wrong password
	replyID       *int32          // fixed id on command replies
	authID        *int32          // fixed id on successful login replies
	unauthMinus1  bool            // requests before login get the -1 failure
	ignoreEmpty   bool            // empty commands get no answer
	chat          bool            // push a chat packet before each answer
	rustConsole   bool            // type-4 / id -1 console lines
	noOutputReply string          // body sent for empty output
}

func int32p(v int32) *int32 { return &v }

func (p Profile) traits() traits {
	srcds := traits{preAuthEmpty: true, splitBytes: 4096 - 10}
	switch p {
	case CS2:
		return traits{}
	case Minecraft:
		return traits{vanillaSplit: true, singleRead: true, probe: probeUnknownRequest, unauthMinus1: true}
	case Factorio:
		return traits{preAuthEmpty: true, probe: probeIgnore, ignoreEmpty: true}
	case Palworld:
		return traits{preAuthEmpty: true, probe: probeIgnore, replyID: int32p(0)}
	case Conan:
		srcds.replyID, srcds.authID = int32p(42), int32p(42)
		return srcds
	case Squad:
		srcds.probe, srcds.badPassword, srcds.chat = probeMirrorMalformed, badPasswordClose, true
		return srcds
	case ARK:
		srcds.badPassword, srcds.noOutputReply = badPasswordSilent, "Server received, But no response!!"
		return srcds
	case RustLegacy:
		return traits{preAuthEmpty: true, probe: probeIgnore, rustConsole: true}
	}
	return srcds
}
