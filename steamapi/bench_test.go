package steamapi

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/gsq-project/gsq/steamapi/steamapitest"
)

// BenchmarkDecodeServers decodes a full answer of 10,000 servers as the
// fake writes it (every field of a Rust server set but the password).
func BenchmarkDecodeServers(b *testing.B) {
	srv := steamapitest.NewServer(steamapitest.Profile{}, fleet(MaxLimit), testKey)
	defer srv.Close()
	resp, err := http.Get(srv.URL() + serverListPath + "?key=" + testKey + "&limit=10000")
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		n := 0
		if _, err := decodeServers(bytes.NewReader(body), "GetServerList", nil, func(r *record) bool {
			if _, ok := r.server(); ok {
				n++
			}
			return true
		}); err != nil || n != MaxLimit {
			b.Fatal(err, n)
		}
	}
}
