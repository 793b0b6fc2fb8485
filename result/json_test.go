package result

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/gsq-project/gsq/internal/jsonenc"
)

// reference encodes v as encoding/json does with HTML escaping off, the
// oracle of the encoder.
func reference(t testing.TB, v any) string { return referenceHTML(t, v, false) }

// referenceHTML encodes v as encoding/json does, with HTML escaping on or
// off.
func referenceHTML(t testing.TB, v any, html bool) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// TestTextTwin checks the base64 twin of a string that is not UTF-8, and
// its absence otherwise.
func TestTextTwin(t *testing.T) {
	t.Parallel()
	o := jsonenc.Begin(nil, false)
	o.Text("ok", []byte("plain"))
	o.Text("utf8", []byte("Zoë"))
	o.Text("name", []byte{'d', 0xe9, 'j', 0xe0})
	got := string(o.End())
	want := `{"ok":"plain","utf8":"Zoë","name":"déjà","name_b64":"ZOlq4A=="}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if !utf8.ValidString(got) {
		t.Fatal("output is not UTF-8")
	}
}

func TestSummaryJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	name, players, password := "n\xff\"", 0, false
	// plainSummary is Summary without its methods: encoding/json encodes
	// it by reflection, from the struct tags.
	type plainSummary Summary
	html := `<b>"Tom & Jerry"</b>`
	for _, s := range []Summary{{}, {Name: &name}, {Players: &players, Password: &password}, fullSummary(), {Name: &html, Map: &name}} {
		want := reference(t, plainSummary(s))
		if got := string(s.AppendJSON(nil)); got != want {
			t.Errorf("AppendJSON: got  %s\nwant %s", got, want)
		}
		if got, want := string(s.AppendHTMLSafeJSON(nil)), referenceHTML(t, plainSummary(s), true); got != want {
			t.Errorf("AppendHTMLSafeJSON: got  %s\nwant %s", got, want)
		}
		if got := reference(t, s); got != want {
			t.Errorf("MarshalJSON: got  %s\nwant %s", got, want)
		}
	}
}

func fullSummary() Summary {
	s, n, b := "x", 3, true
	return Summary{Name: &s, Map: &s, Game: &s, Players: &n, MaxPlayers: &n, Bots: &n, Password: &b, Version: &s, Connect: &s}
}

func TestErrorJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	e := &Error{Kind: KindTimeout, Message: `a2s: info "x": no answer`}
	if got, want := string(e.appendJSON(nil)), reference(t, e); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// roundedReference is what jsonenc.AppendRounded must write: the float64 rounded
// to n decimals, as encoding/json writes it.
func roundedReference(f float64, n int) (string, bool) {
	p := math.Pow10(n)
	v := math.Round(f*p) / p
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "", false
	}
	return string(jsonenc.AppendFloat(nil, v)), true
}

func checkRounded(t *testing.T, f float64) {
	for _, n := range []int{2, 3} {
		got, ok := jsonenc.AppendRounded(nil, f, n)
		want, wantOK := roundedReference(f, n)
		if string(got) != want || ok != wantOK {
			t.Fatalf("AppendRounded(%v, %d) = %q, %v; want %q, %v", f, n, got, ok, want, wantOK)
		}
	}
}

func TestAppendRounded(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0, math.Copysign(0, -1), -0.0004, 0.0004, 0.0005, 0.005, 1, -1, 2527.5, 12.3456789, 0.1, 0.7, 1.005,
		-1.2345, 999999999.9994, 999999999.9996, 1e9, 1e12, -1e15, 1e300, math.MaxFloat32, math.Inf(1), math.NaN(), 4.35, 8.675} {
		checkRounded(t, f)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		checkRounded(t, float64(float32(r.NormFloat64()*math.Pow10(r.IntN(12)-3))))
		checkRounded(t, float64(r.IntN(1e6))/1000+float64(r.IntN(3))*1e-9)
	}
}

func FuzzAppendRounded(f *testing.F) {
	for _, v := range []float64{0, 1.5, -2.25, 1e9, 12.3456} {
		f.Add(v)
	}
	f.Fuzz(checkRounded)
}
