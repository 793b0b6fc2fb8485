package flexjson

import (
	"encoding/json"
	"testing"
)

func TestLenient(t *testing.T) {
	t.Parallel()
	var v struct {
		A, B, C, D, E Int
		F, G, H, I    Bool
		J, K, L, M, N String
	}
	in := `{"A":5,"B":"7","C":"18446744073709551615","D":1.5,"E":{"x":1},
		"F":true,"G":"1","H":0,"I":"yes",
		"J":"plain","K":"esc\u00e9\n","L":12,"M":null,"N":[1]}`
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	if v.A != 5 || v.B != 7 || uint64(v.C) != 1<<64-1 || v.D != 0 || v.E != 0 {
		t.Errorf("ints %v %v %v %v %v", v.A, v.B, v.C, v.D, v.E)
	}
	if !v.F || !v.G || v.H || v.I {
		t.Errorf("bools %v %v %v %v", v.F, v.G, v.H, v.I)
	}
	if v.J != "plain" || v.K != "esc\u00e9\n" || v.L != "12" || v.M != "" || v.N != "" {
		t.Errorf("strings %q %q %q %q %q", v.J, v.K, v.L, v.M, v.N)
	}
}
