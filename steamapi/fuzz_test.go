package steamapi

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzDecodeServers feeds arbitrary bodies to the streaming decoder: it
// returns, with a *ParseError within the body or none, hands out only
// records with a readable address, and counts every element it reads.
func FuzzDecodeServers(f *testing.F) {
	for _, s := range []string{
		rustGamedig110,
		`{"response":{}}`,
		`{"response":{"success":true,"servers":[{"addr":"1.2.3.4:27015","gmsindex":-1,"steamid":"85568392920039958","appid":730,"gamedir":"csgo","region":255,"secure":true,"lan":false,"gameport":27015,"specport":0}]}}`,
		`{"response":{"servers":[{"addr":"1.2.3.4:5","players":"7"},7,[],{"addr":12}]}}`,
		`<html>Forbidden</html>`,
		`{"response":{"servers":[{"addr":"1.2.3.4:5"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		handed := 0
		st, err := decodeServers(strings.NewReader(body), "GetServerList", func(string, json.RawMessage) {}, func(r *record) bool {
			if _, ok := r.server(); ok {
				handed++
			}
			return true
		})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > int64(len(body)) {
				t.Fatalf("%q: %v, not a *ParseError within the body", body, err)
			}
			if errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("%q: a bare io.EOF mid-body", body)
			}
		}
		if handed > st.records || st.malformed > st.records {
			t.Fatalf("%q: %d handed out, %+v", body, handed, st)
		}
	})
}
