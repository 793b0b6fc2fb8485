package a2s

import (
	"reflect"
	"testing"
)

func TestParseRulesOwned(t *testing.T) {
	b := mustAppend(t, &Rules{List: []Rule{{Name: Text("a"), Value: Text("1")}, {Name: Text("bb"), Value: Text("")}}})
	want, err := ParseRules(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseRulesOwned(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseRulesOwned = %+v, ParseRules = %+v", got, want)
	}
	// The owned parse keeps b instead of copying it; ParseRules copies.
	b[len(b)-3] = 'x' // the last name's last byte
	if string(got.List[1].Name) != "bx" || string(want.List[1].Name) != "bb" {
		t.Errorf("after changing b: owned %q, copied %q", got.List[1].Name, want.List[1].Name)
	}
	owned := testing.AllocsPerRun(100, func() { _, _ = ParseRulesOwned(b) })
	copied := testing.AllocsPerRun(100, func() { _, _ = ParseRules(b) })
	if owned >= copied {
		t.Errorf("ParseRulesOwned allocates %v times, ParseRules %v: the copy should be saved", owned, copied)
	}
}
