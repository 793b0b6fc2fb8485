package fivem

import (
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary bodies to the three parsers: each reads, or
// fails with a *ParseError within the body that matches ErrNotFiveM.
func FuzzParse(f *testing.F) {
	f.Add([]byte(infoFXServer))
	f.Add([]byte(`[{"endpoint":"127.0.0.1","id":1,"identifiers":["license:abc"],"name":"Ann","ping":42}]`))
	f.Add([]byte(`{"clients":3,"gametype":"Freeroam","hostname":"x","iv":"1","mapname":"m","sv_maxclients":"48"}`))
	f.Add([]byte(`["not","an","object"]`))
	f.Add([]byte(`<html>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, parse := range []func([]byte) error{
			func(b []byte) error { _, err := ParseInfo(b); return err },
			func(b []byte) error { _, err := ParsePlayers(b); return err },
			func(b []byte) error { _, err := ParseDynamic(b); return err },
		} {
			err := parse(b)
			if err == nil {
				continue
			}
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrNotFiveM) || pe.Offset < 0 || pe.Offset > int64(len(b)) {
				t.Fatalf("%q: %v", b, err)
			}
		}
	})
}
