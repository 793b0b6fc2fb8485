package rcon

import (
	"bytes"
	"fmt"
	"strings"
)

// Profile is what the client knows in advance of one game's server, so
// that it need not find it out (see the package documentation): with a
// profile, the first commands of a connection skip the tests an unknown
// server gets. Select one by name with [Options].Profile.
type Profile struct {
	Name    string // as accepted by LookupProfile
	Summary string // one line, for help texts

	traits traits
}

// squadTail is what follows the extra packet Squad sends after a probe's
// mirror: its size field says 10 where 17 bytes follow, so 7 bytes are
// left over. SquadJS, the Squad community's server tool, skips them the
// same way.
var squadTail = []byte{0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00}

var profiles = []Profile{
	{
		// Classic SRCDS (CS:GO, TF2, L4D2 and other Source games)
		// mirrors a probe and takes one in the command's segment.
		Name:    "srcds",
		Summary: "classic Source server: the probe goes out with each command",
		traits:  traits{probe: yes, backToBack: yes},
	},
	{
		// Factorio answers every command with exactly one packet and
		// ignores empty commands and probes, so a probing client hangs.
		Name:    "factorio",
		Summary: "one packet per command, probes ignored",
		traits:  traits{probe: no, single: true},
	},
	{
		// Palworld answers with id 0 whatever id was sent, with one
		// packet per command, and ignores probes.
		Name:    "palworld",
		Summary: "replies carry id 0; one packet per command",
		traits:  traits{fixedIDs: []int32{0}, probe: no, single: true},
	},
	{
		// Old Conan Exiles servers answer every request, the login
		// included, with id 42; probes are mirrored as on SRCDS, so the
		// extra packet ends an answer.
		Name:    "conan",
		Summary: "replies carry id 42; the probe's extra packet ends an answer",
		traits:  traits{fixedIDs: []int32{42}, probe: yes},
	},
	{
		// Squad pushes chat as type-1 packets (delivered on
		// Client.Events), sends the probe's extra packet with a size
		// field of 10 although 17 bytes follow (the stray bytes are
		// skipped), and closes the connection on a wrong password.
		Name:    "squad",
		Summary: "chat events; malformed probe mirror skipped",
		traits:  traits{probe: yes, backToBack: yes},
	},
	{
		// ARK answers commands without output "Server received, But no
		// response!!", drops a request that arrives while it handles
		// another, and never answers a wrong password.
		Name:    "ark",
		Summary: "probes only after the answer's first packet",
		traits:  traits{probe: yes, backToBack: no},
	},
	{
		// Legacy Rust RCON (+rcon.web 0) streams console lines as type-4
		// packets, ends each answer with an empty packet of id -1,
		// ignores probes, handles only the first packet of each read, and
		// sends single-byte text until asked for UTF-8.
		Name:    "rust-legacy",
		Summary: "type-4 console lines as events; UTF-8 asked for at once",
		traits:  traits{rust: true, probe: no},
	},
}

// Profiles returns the known game profiles.
func Profiles() []Profile {
	return append([]Profile(nil), profiles...)
}

// ProfileNames returns the names of the known game profiles.
func ProfileNames() []string {
	names := make([]string, len(profiles))
	for i, p := range profiles {
		names[i] = p.Name
	}
	return names
}

// LookupProfile returns the profile with the given name
// (case-insensitive). The empty name returns the zero Profile, which
// knows nothing in advance. The error of an unknown name lists the known
// ones.
func LookupProfile(name string) (Profile, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return Profile{}, nil
	}
	for _, p := range profiles {
		if p.Name == name {
			p.traits = p.traits.clone()
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("rcon: unknown profile %q (known: %s)", name, strings.Join(ProfileNames(), ", "))
}

// isProbeTail reports whether body is that of the extra packet SRCDS
// sends after a probe's mirror. The Valve Developer Community page gives
// it as 0x0000 0001 0000 0000; servers differ in how many of the zeros
// after the 1 they send, so trailing NULs do not count.
func isProbeTail(body []byte) bool {
	return string(bytes.TrimRight(body, "\x00")) == "\x00\x00\x00\x01"
}
