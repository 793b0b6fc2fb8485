package monitor

import (
	"slices"
	"strings"
	"testing"
)

func TestConfigVantages(t *testing.T) {
	cfg, err := Parse([]byte(`
vantages: [eu, us, asia]
servers:
  - {name: a, address: 127.0.0.1:27015}
  - {name: b, address: 127.0.0.1:27016, vantages: [eu, us], quorum: 2}
  - {name: c, address: 127.0.0.1:27017, quorum: 1}
`), "monitor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := cfg.Server("a"), cfg.Server("b"), cfg.Server("c")
	if !slices.Equal(a.Vantages, []string{"eu", "us", "asia"}) || a.Quorum != 0 || a.QuorumOf(len(a.Vantages)) != 2 {
		t.Errorf("a inherits %+v, quorum %d", a.Vantage, a.QuorumOf(len(a.Vantages)))
	}
	if !slices.Equal(b.Vantages, []string{"eu", "us"}) || b.QuorumOf(2) != 2 {
		t.Errorf("b = %+v", b.Vantage)
	}
	if len(c.Vantages) != 3 || c.QuorumOf(3) != 1 {
		t.Errorf("c = %+v", c.Vantage)
	}
	if q := (Vantage{}).QuorumOf(1); q != 1 {
		t.Errorf("one region alone: quorum %d", q)
	}

	for _, bad := range []struct{ yaml, want string }{
		{"vantages: [eu, eu]\n", "listed twice"},
		{"vantages: [\"e u\"]\n", "letters, digits"},
		{"servers:\n  - {name: a, address: 127.0.0.1, vantages: [eu], quorum: 2}\n", "more than the 1 vantages"},
		{"quorum: 0\n", "quorum"},
	} {
		_, err := Parse([]byte(bad.yaml), "monitor.yaml")
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want %q", bad.yaml, err, bad.want)
		}
	}
}
