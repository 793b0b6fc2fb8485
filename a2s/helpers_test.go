package a2s

import (
	"testing"
)

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
