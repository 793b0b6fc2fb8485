package rcontest

import (
	"fmt"
	"strings"
)

// Profile selects which real server a [Server] imitates. The zero value
// is [SRCDS]. The quirks are those reported by the projects that talk to
// these servers (see each constant); where a detail is not known it is
// said so.
type Profile int

// Profiles.
const (
	// SRCDS is classic Source (CS:GO, TF2, L4D2), as the Valve Developer
	// Community page "Source RCON Protocol" describes it: an empty
	// RESPONSE_VALUE before every AUTH_RESPONSE, in the same write;
	// output split every 4086 bytes; an empty RESPONSE_VALUE is mirrored,
	// then followed by an extra packet with the body 00 00 00 01 00 00 00;
	// a command before login gets an empty RESPONSE_VALUE.
	SRCDS Profile = iota
	// CS2 is Counter-Strike 2: no packet before AUTH_RESPONSE and no
	// splitting, so long output comes as one packet above 4096 bytes
	// (reported by the rcon-srcds and CoreRcon projects). Probes are
	// mirrored as on SRCDS (not verified on real CS2).
	CS2
	// Minecraft is vanilla Minecraft Java's RCON: each request must be
	// exactly one read of at most 1460 bytes, so a request split over two
	// reads, or two requests coalesced into one read, make it drop the
	// connection; no packet before AUTH_RESPONSE; output cut every 4096
	// UTF-16 units, a surrogate pair cut in two becoming '?' as Java
	// encodes it; unknown request types answered "Unknown request <hex>";
	// anything before login answered with the -1 login failure; a wrong
	// password leaves the connection open.
	Minecraft
	// Factorio answers each command with exactly one packet and ignores
	// empty commands and RESPONSE_VALUE probes, so probing clients hang.
	// Login as SRCDS (not verified).
	Factorio
	// Palworld answers everything with id 0: a good login with (0,
	// AUTH_RESPONSE) and nothing before it, each command with one packet.
	// Probes are ignored. Palworld's truncation of long lines is not
	// imitated.
	Palworld
	// Conan is an old Conan Exiles server: every reply, the login
	// included, carries id 42 (gorcon/rcon's changelog, 1.2.0).
	// Otherwise as SRCDS.
	Conan
	// Squad pushes an unsolicited type-1 chat packet before each answer,
	// sends the probe's extra packet with a size field of 10 although 17
	// bytes follow (the SquadJS project works around it), and closes the
	// connection about 250 ms after a wrong password instead of answering
	// -1. Otherwise as SRCDS.
	Squad
	// ARK answers commands without output "Server received, But no
	// response!! \n ", drops a request that arrives while it handles
	// another (one in the same read as the command, or arriving before
	// the answer is written), and never answers a wrong password, keeping
	// the connection open. Otherwise as SRCDS.
	ARK
	// RustLegacy is Rust with +rcon.web 0: it handles only the first
	// packet of each read and drops the rest; each command's answer is
	// preceded by a type-4 console line with id -1 and followed by an
	// empty RESPONSE_VALUE with id -1; "say" is answered with id -1;
	// probes get no answer. Text goes out as single bytes, each UTF-16
	// unit cut to its low byte, until the client sends a packet of type 5,
	// which switches the connection to UTF-8. Login as SRCDS.
	RustLegacy
	// GoMC is a Minecraft-shaped server built on go-mc's net.ListenRCON:
	// no packet before AUTH_RESPONSE; a wrong password gets -1, then the
	// connection is closed; any request that is not a command after the
	// login (a type-0 probe included), or above 4096 bytes, closes the
	// connection; output is cut every 4096 bytes, even inside a UTF-8
	// sequence.
	GoMC
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
	GoMC:       "gomc",
}

// String returns the profile's name as accepted by [LookupProfile].
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

// ProfileNames returns the names of every profile.
func ProfileNames() []string { return append([]string(nil), profileNames[:]...) }

// LookupProfile returns the profile with the given name,
// case-insensitively. The error of an unknown name lists the known ones.
func LookupProfile(name string) (Profile, error) {
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
	probeHangUp                           // close the connection
)

// badPasswordMode is how a profile answers a wrong password.
type badPasswordMode int

const (
	badPasswordMinusOne      badPasswordMode = iota // AUTH_RESPONSE id -1
	badPasswordClose                                // close the connection ~250 ms later
	badPasswordSilent                               // no answer, connection kept
	badPasswordMinusOneClose                        // -1, then close
)

// readMode is how a profile reads requests.
type readMode int

const (
	readStream    readMode = iota // a byte stream, any segmentation
	readVanilla                   // one read must be exactly one packet
	readFirstOnly                 // the first packet of each read; the rest dropped
	readDropBusy                  // requests arriving while one is handled are dropped
)

// traits is what a profile does, field by field.
type traits struct {
	read          readMode
	preAuthEmpty  bool            // empty RESPONSE_VALUE before AUTH_RESPONSE
	splitBytes    int             // >0: split output at this many bytes
	cutAnywhere   bool            // split at splitBytes even inside a UTF-8 sequence
	vanillaSplit  bool            // split at 4096 UTF-16 units like Java
	probe         probeMode       // answer to an empty RESPONSE_VALUE
	badPassword   badPasswordMode // answer to a wrong password
	replyID       *int32          // fixed id on every reply
	unauthMinus1  bool            // requests before login get the -1 failure
	authFirst     bool            // anything but a login first closes the connection
	maxRequest    int             // >0: larger requests close the connection
	ignoreEmpty   bool            // empty commands get no answer
	chat          bool            // push a chat packet before each answer
	rustConsole   bool            // type-4 console line before, empty id -1 after each answer
	lowBytes      bool            // text as low bytes until a type-5 packet
	noOutputReply string          // body sent for empty output
}

func int32p(v int32) *int32 { return &v }

func (p Profile) traits() traits {
	srcds := traits{preAuthEmpty: true, splitBytes: 4096 - 10}
	switch p {
	case CS2:
		return traits{}
	case Minecraft:
		return traits{read: readVanilla, vanillaSplit: true, probe: probeUnknownRequest, unauthMinus1: true}
	case Factorio:
		return traits{preAuthEmpty: true, probe: probeIgnore, ignoreEmpty: true}
	case Palworld:
		return traits{probe: probeIgnore, replyID: int32p(0)}
	case Conan:
		srcds.replyID = int32p(42)
		return srcds
	case Squad:
		srcds.probe, srcds.badPassword, srcds.chat = probeMirrorMalformed, badPasswordClose, true
		return srcds
	case ARK:
		srcds.read, srcds.badPassword, srcds.noOutputReply = readDropBusy, badPasswordSilent, "Server received, But no response!! \n "
		return srcds
	case RustLegacy:
		return traits{read: readFirstOnly, preAuthEmpty: true, probe: probeIgnore, rustConsole: true, lowBytes: true}
	case GoMC:
		return traits{splitBytes: 4096, cutAnywhere: true, probe: probeHangUp, badPassword: badPasswordMinusOneClose,
			authFirst: true, maxRequest: 4096}
	}
	return srcds
}
