package a2s

import (
	"encoding/hex"
	"strings"
	"testing"
)

// unhex decodes a spec-style hex dump ("FF FF 49 ..."), ignoring spaces and
// newlines.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex: %v", err)
	}
	return b
}

// appender is anything with an AppendBinary method.
type appender interface {
	AppendBinary(b []byte) ([]byte, error)
}

// mustAppend encodes m into a fresh buffer.
func mustAppend(t testing.TB, m appender) []byte {
	t.Helper()
	b, err := m.AppendBinary(nil)
	if err != nil {
		t.Fatalf("AppendBinary: %v", err)
	}
	return b
}
