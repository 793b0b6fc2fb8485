package ogp

import "fmt"

// Dialect selects the wire layout. The zero value is [V091], the OGP v0.91
// specification; [V1] is the layout of the later server SDK that the
// deployed servers speak (see the package doc).
type Dialect uint8

// Dialects.
const (
	V091 Dialect = iota // OGP v0.91 as written (the project contract)
	V1                  // the v1.x / SDK layout
)

// String returns "v0.91" or "v1".
func (d Dialect) String() string {
	switch d {
	case V091:
		return "v0.91"
	case V1:
		return "v1"
	}
	return fmt.Sprintf("Dialect(%d)", uint8(d))
}

// ParseDialect accepts "v0.91" (or "0.91", "v091") and "v1" (or "1", "sdk").
func ParseDialect(s string) (Dialect, error) {
	switch s {
	case "v0.91", "0.91", "v091", "":
		return V091, nil
	case "v1", "1", "sdk":
		return V1, nil
	}
	return 0, fmt.Errorf("ogp: unknown dialect %q (want v0.91 or v1)", s)
}

// other is the dialect that is not d.
func (d Dialect) other() Dialect {
	if d == V1 {
		return V091
	}
	return V1
}
