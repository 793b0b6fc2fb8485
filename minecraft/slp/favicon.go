package slp

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// Favicon is the server's icon, a 64x64 PNG sent as a data URL. Servers
// before 1.13 broke its base64 into lines with \n; the whitespace is
// dropped before decoding.
type Favicon struct {
	MIME string // "image/png", or what the data URL says
	// Size is the decoded image's length in bytes; of the URL as sent
	// when Malformed.
	Size int
	// SHA256 is the hex SHA-256 of the decoded image (of the URL as sent
	// when Malformed): enough to tell when it changes.
	SHA256 string
	// PNG is the decoded image, kept only on request
	// (ParseOptions.KeepFavicon). AppendJSON sends it.
	PNG []byte
	// Malformed is set when the favicon is not a base64 data URL.
	Malformed bool
}

// NewFavicon is the favicon of png, as a server sends it.
func NewFavicon(png []byte) *Favicon {
	sum := sha256.Sum256(png)
	return &Favicon{MIME: "image/png", Size: len(png), SHA256: hex.EncodeToString(sum[:]), PNG: png}
}

// DataURL is the favicon as a data URL, from PNG; "" when PNG is nil.
func (f *Favicon) DataURL() string {
	if f.PNG == nil {
		return ""
	}
	mime := f.MIME
	if mime == "" {
		mime = "image/png"
	}
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(f.PNG)
}

func parseFavicon(url string, keep bool) *Favicon {
	url = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, url)
	malformed := func() *Favicon {
		sum := sha256.Sum256([]byte(url))
		return &Favicon{Size: len(url), SHA256: hex.EncodeToString(sum[:]), Malformed: true}
	}
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return malformed()
	}
	mime, data, ok := strings.Cut(rest, ";base64,")
	if !ok {
		return malformed()
	}
	png, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		if png, err = base64.RawStdEncoding.DecodeString(data); err != nil {
			return malformed()
		}
	}
	f := NewFavicon(png)
	f.MIME = mime
	if !keep {
		f.PNG = nil
	}
	return f
}
