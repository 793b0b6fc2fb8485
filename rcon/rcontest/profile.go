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

// ProbeMode is how a server answers an empty RESPONSE_VALUE (a probe).
type ProbeMode int

// Probe modes.
const (
	ProbeMirror          ProbeMode = iota // an empty mirror, then an extra packet (SRCDS)
	ProbeMirrorMalformed                  // as ProbeMirror, the extra packet's size field saying 10 (Squad)
	ProbeUnknownRequest                   // "Unknown request 0" (Minecraft)
	ProbeIgnore                           // no answer (Factorio, Palworld, legacy Rust)
	ProbeHangUp                           // the connection closed (go-mc)
)

// BadPasswordMode is how a server answers a wrong password.
type BadPasswordMode int

// Answers to a wrong password.
const (
	BadPasswordMinusOne      BadPasswordMode = iota // AUTH_RESPONSE id -1
	BadPasswordClose                                // the connection closed about 250 ms later (Squad)
	BadPasswordSilent                               // no answer, the connection kept (ARK)
	BadPasswordMinusOneClose                        // -1, then the connection closed (go-mc)
)

// ReadMode is how a server reads requests.
type ReadMode int

// Read modes.
const (
	ReadStream    ReadMode = iota // a byte stream, any segmentation
	ReadVanilla                   // one read must be exactly one packet of at most 1460 bytes (vanilla Minecraft)
	ReadFirstOnly                 // the first packet of each read, the rest dropped (legacy Rust)
	ReadDropBusy                  // requests arriving while one is handled are dropped (ARK)
)

// Behaviour is what a [Server] does, quirk by quirk: the data a [Profile]
// stands for ([Profile.Behaviour]), which a test may change to compose a
// server no profile imitates ([Server.Behaviour]).
type Behaviour struct {
	Read         ReadMode
	PreAuthEmpty bool            // an empty RESPONSE_VALUE before AUTH_RESPONSE
	SplitBytes   int             // > 0: output split at this many bytes
	CutAnywhere  bool            // split at SplitBytes even inside a UTF-8 sequence
	VanillaSplit bool            // output split every 4096 UTF-16 units, as Java does
	Probe        ProbeMode       // the answer to an empty RESPONSE_VALUE
	BadPassword  BadPasswordMode // the answer to a wrong password
	// FixedReplyID puts ReplyID on every reply, the login's included,
	// whatever the request's id.
	FixedReplyID  bool
	ReplyID       int32
	UnauthMinus1  bool   // requests before the login get the -1 login failure
	AuthFirst     bool   // anything but a login first closes the connection
	MaxRequest    int    // > 0: larger requests close the connection
	IgnoreEmpty   bool   // empty commands get no answer
	Chat          bool   // a type-1 chat packet before each answer (Squad)
	RustConsole   bool   // a type-4 console line before, an empty id -1 packet after each answer
	LowBytes      bool   // text as each UTF-16 unit's low byte until a type-5 packet
	NoOutputReply string // the body sent for empty output
}

// Behaviour returns what the profile does.
func (p Profile) Behaviour() Behaviour {
	srcds := Behaviour{PreAuthEmpty: true, SplitBytes: 4096 - 10}
	switch p {
	case CS2:
		return Behaviour{}
	case Minecraft:
		return Behaviour{Read: ReadVanilla, VanillaSplit: true, Probe: ProbeUnknownRequest, UnauthMinus1: true}
	case Factorio:
		return Behaviour{PreAuthEmpty: true, Probe: ProbeIgnore, IgnoreEmpty: true}
	case Palworld:
		return Behaviour{Probe: ProbeIgnore, FixedReplyID: true, ReplyID: 0}
	case Conan:
		srcds.FixedReplyID, srcds.ReplyID = true, 42
		return srcds
	case Squad:
		srcds.Probe, srcds.BadPassword, srcds.Chat = ProbeMirrorMalformed, BadPasswordClose, true
		return srcds
	case ARK:
		srcds.Read, srcds.BadPassword, srcds.NoOutputReply = ReadDropBusy, BadPasswordSilent, "Server received, But no response!! \n "
		return srcds
	case RustLegacy:
		return Behaviour{Read: ReadFirstOnly, PreAuthEmpty: true, Probe: ProbeIgnore, RustConsole: true, LowBytes: true}
	case GoMC:
		return Behaviour{SplitBytes: 4096, CutAnywhere: true, Probe: ProbeHangUp, BadPassword: BadPasswordMinusOneClose,
			AuthFirst: true, MaxRequest: 4096}
	}
	return srcds
}
