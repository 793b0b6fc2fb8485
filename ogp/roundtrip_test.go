package ogp_test

import (
	"errors"
	"testing"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
)

// Every structure survives encode -> decode in both dialects, and every
// truncated prefix of the encoding is an error.
func TestAnswerRoundTrip(t *testing.T) {
	t.Parallel()
	for _, d := range []ogp.Dialect{ogp.V091, ogp.V1} {
		for _, players := range []int{0, 1, 4, 40} {
			full := ogptest.SampleAnswer(d, players)
			b, err := full.Append(nil, d)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ogp.ParseAnswer(b, d)
			if err != nil {
				t.Fatalf("%v/%d: %v", d, players, err)
			}
			q := ogp.QueryAll(d)
			sameAnswer(t, got, expect(full, &q, d))
			for i := range b {
				if _, err := ogp.ParseAnswer(b[:i], d); err == nil {
					t.Fatalf("%v/%d: prefix %d of %d parsed", d, players, i, len(b))
				} else if !errors.Is(err, ogp.ErrTruncated) {
					t.Fatalf("%v/%d: prefix %d: %v", d, players, i, err)
				}
			}
		}
	}
}

func TestQueryRoundTrip(t *testing.T) {
	t.Parallel()
	for _, d := range []ogp.Dialect{ogp.V091, ogp.V1} {
		q := ogp.QueryAll(d)
		b, err := q.Append(nil, d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ogp.ParseQuery(b, d)
		if err != nil || got != q {
			t.Fatalf("%v: %+v, %v", d, got, err)
		}
		for i := range b {
			if _, err := ogp.ParseQuery(b[:i], d); !errors.Is(err, ogp.ErrTruncated) {
				t.Fatalf("%v: prefix %d: %v", d, i, err)
			}
		}
		// A query stays far below the 500 bytes the SDK accepts.
		h := ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge | ogp.FlagRequestID | ogp.FlagSplit | ogp.FlagUTF8}
		if n := h.Len() + len(b); n > 40 {
			t.Fatalf("%v: full query is %d bytes", d, n)
		}
	}
}
