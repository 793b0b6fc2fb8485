package rcon

import (
	"fmt"
	"strings"
)

// Dialect selects the RCON variant a server speaks. The zero value is
// [DialectSource].
type Dialect int

// Dialects.
const (
	// DialectSource is classic SRCDS (CS:GO, TF2, L4D2, Squad, ARK, ...):
	// an empty RESPONSE_VALUE precedes AUTH_RESPONSE, long output is split
	// into packets of at most 4096 bytes, several requests may be in
	// flight, and an empty RESPONSE_VALUE probe is mirrored back followed
	// by an extra packet.
	DialectSource Dialect = iota
	// DialectCS2 is Counter-Strike 2: no empty packet before
	// AUTH_RESPONSE and no splitting (one packet, possibly above 4096
	// bytes), so each command gets exactly one packet.
	DialectCS2
	// DialectMinecraft is Minecraft Java: a request must arrive as one
	// read of at most 1460 bytes (two packets coalesced in one read make
	// the server drop the connection), output is split every 4096 UTF-16
	// units, and a type-0 probe is answered "Unknown request 0".
	DialectMinecraft
)

var dialectNames = [...]string{
	DialectSource:    "source",
	DialectCS2:       "cs2",
	DialectMinecraft: "minecraft",
}

// String returns the dialect's name as accepted by [ParseDialect].
func (d Dialect) String() string {
	if d >= 0 && int(d) < len(dialectNames) {
		return dialectNames[d]
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// ParseDialect parses a dialect name, case-insensitively: "source" (or
// "srcds"), "cs2", "minecraft" (or "mc").
func ParseDialect(s string) (Dialect, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "source", "srcds", "":
		return DialectSource, nil
	case "cs2":
		return DialectCS2, nil
	case "minecraft", "mc":
		return DialectMinecraft, nil
	}
	return 0, fmt.Errorf("rcon: unknown dialect %q (want source, cs2 or minecraft)", s)
}

// MinecraftFragmentUnits is the fragment length, in UTF-16 code units,
// at which vanilla Minecraft cuts command output (wiki.vg, "RCON":
// "Fragmentation").
const MinecraftFragmentUnits = 4096

// MaxCommandLen is the longest command body the dialect accepts in one
// request: 1446 bytes for Minecraft (vanilla reads a request in one read
// of at most 1460 bytes) and 4086 bytes for Source and CS2 (Valve's
// 4096-byte limit on the size field).
func (d Dialect) MaxCommandLen() int {
	if d == DialectMinecraft {
		return 1460 - 4 - MinPacketSize
	}
	return 4096 - MinPacketSize
}
