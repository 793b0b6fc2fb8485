package cli

import "testing"

func TestSplitHostPort(t *testing.T) {
	tests := []struct {
		in       string
		def      uint16
		host     string
		port     uint16
		wantFail bool
	}{
		{in: "127.0.0.1", def: 27015, host: "127.0.0.1", port: 27015},
		{in: "127.0.0.1:27016", def: 27015, host: "127.0.0.1", port: 27016},
		{in: "[::1]:27016", def: 27015, host: "::1", port: 27016},
		{in: "::1", def: 27015, host: "::1", port: 27015},
		{in: "[::1]", def: 27015, host: "::1", port: 27015},
		{in: "example.com", def: 27015, host: "example.com", port: 27015},
		{in: "example.com:7777", def: 27015, host: "example.com", port: 7777},
		{in: "127.0.0.1", def: 0, wantFail: true}, // OGP: no standard port
		{in: "127.0.0.1:0", def: 27015, wantFail: true},
		{in: "127.0.0.1:70000", def: 27015, wantFail: true},
		{in: "127.0.0.1:http", def: 27015, wantFail: true},
		{in: "fe80::1:2:3:zz", def: 27015, wantFail: true},
		{in: "", def: 27015, wantFail: true},
	}
	for _, tt := range tests {
		host, port, err := splitHostPort(tt.in, tt.def)
		if tt.wantFail {
			if err == nil {
				t.Errorf("splitHostPort(%q) = %q, %d; want an error", tt.in, host, port)
			}
			continue
		}
		if err != nil || host != tt.host || port != tt.port {
			t.Errorf("splitHostPort(%q) = %q, %d, %v; want %q, %d", tt.in, host, port, err, tt.host, tt.port)
		}
	}
}

func TestObjectText(t *testing.T) {
	var o object
	o.text("name", []byte("ok"))
	o.text("map", []byte{'d', 0xff, 'e'})
	o.set("n", 3)
	got, err := o.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"name\":\"ok\",\"map\":\"d\uFFFDe\",\"map_b64\":\"ZP9l\",\"n\":3}"
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
