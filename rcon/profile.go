package rcon

import (
	"fmt"
	"strings"
	"time"
)

// Profile adapts the client to one game's deviations from its dialect.
// Select one by name with [Options].Profile; [Profiles] lists them.
type Profile struct {
	Name    string // as accepted by LookupProfile
	Summary string // one line, for help texts

	term      Terminator // nil: the dialect's default
	anyIDs    []int32    // reply ids accepted for the one request in flight
	serial    bool       // never pipeline, even if asked to
	squadTail bool       // skip Squad's 7 stray bytes after the probe's extra packet
}

// squadTail is what follows Squad's extra probe packet, whose size field
// says 10 where 17 bytes follow (field notes §3 SquadJS, §4 Squad).
var squadTail = []byte{0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00}

var profiles = []Profile{
	{
		// Factorio answers every command with exactly one packet and
		// ignores empty commands and type-0 probes, so a probing client
		// hangs (field notes §4 Factorio: n0la/rcon PR #6,
		// panicbit/rust-rcon#13).
		Name:    "factorio",
		Summary: "one packet per command, probes ignored",
		term:    SinglePacket{},
	},
	{
		// Palworld answers with request id 0 whatever id was sent
		// (field notes §4 Palworld: conqp/rcon#25/#29, PR #26), and sends
		// one packet per command. Id 0 is accepted for the single
		// request in flight, so requests are serial; a cancelled request
		// makes the connection unusable because its late reply could not
		// be told from the next one.
		Name:    "palworld",
		Summary: "replies carry id 0; one packet per command; serial",
		term:    SinglePacket{},
		anyIDs:  []int32{0},
		serial:  true,
	},
	{
		// Old Conan Exiles servers answer every request, the login
		// included, with id 42 (field notes §3 gorcon CHANGELOG 1.2.0, §4
		// Conan). As replies cannot be told from probe mirrors, a quiet
		// period ends the answer. The client never uses id 42 itself.
		Name:    "conan",
		Summary: "replies carry id 42; quiet-period end detection; serial",
		term:    QuietPeriod{},
		anyIDs:  []int32{42},
		serial:  true,
	},
	{
		// Squad pushes chat as unsolicited type-1 packets (delivered on
		// Client.Events) and answers the probe's extra packet with a size
		// field of 10 although 17 bytes follow; the 7 stray bytes are
		// recognised and skipped (field notes §3 SquadJS, §4 Squad). A
		// wrong password closes the socket instead of answering -1, which
		// Dial reports as ErrConnClosed.
		Name:      "squad",
		Summary:   "chat events, malformed probe mirror skipped",
		squadTail: true,
	},
	{
		// ARK answers commands without output with "Server received, But
		// no response!!", some not at all, cannot handle concurrent
		// commands, and never answers a wrong password (field notes §4
		// ARK). A quiet period ends answers; with no reply at all the
		// answer is empty after NoReply. A wrong password ends in
		// ErrNoAuthResponse.
		Name:    "ark",
		Summary: "quiet-period end detection, empty answer after 3s of silence; serial",
		term:    QuietPeriod{NoReply: 3 * time.Second},
		serial:  true,
	},
	{
		// Legacy Rust RCON (+rcon.web 0) streams console lines as type-4
		// packets and id -1 packets (both go to Client.Events), does not
		// mirror probes, answers each command with one packet, and
		// answers "say" only with an id -1 console line, so a command
		// without a reply for 3s returns empty output (field notes §3
		// gorcon, §4 Rust).
		Name:    "rust-legacy",
		Summary: "type-4 and id -1 console lines as events; one packet per command, empty after 3s of silence",
		term:    SinglePacket{NoReply: 3 * time.Second},
	},
}

// Profiles returns the known game profiles.
func Profiles() []Profile {
	return append([]Profile(nil), profiles...)
}

// LookupProfile returns the profile with the given name
// (case-insensitive). The empty name returns the zero Profile, which
// changes nothing.
func LookupProfile(name string) (Profile, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return Profile{}, nil
	}
	for _, p := range profiles {
		if p.Name == name {
			return p, nil
		}
	}
	names := make([]string, len(profiles))
	for i, p := range profiles {
		names[i] = p.Name
	}
	return Profile{}, fmt.Errorf("rcon: unknown profile %q (known: %s)", name, strings.Join(names, ", "))
}

// acceptsID reports whether a reply with id may answer the single request
// in flight although its id differs.
func (p Profile) acceptsID(id int32) bool {
	for _, a := range p.anyIDs {
		if a == id {
			return true
		}
	}
	return false
}
