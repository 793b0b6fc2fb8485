package a2s

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// Seed corpora live in testdata/fuzz/FuzzX and hold the same inputs as the
// f.Add seeds below.

func infoSeeds(t testing.TB) [][]byte {
	return [][]byte{testutil.Unhex(t, specInfoCSS), testutil.Unhex(t, specInfoShip), testutil.Unhex(t, specInfoSiN), testutil.Unhex(t, specInfoRDKF),
		testutil.Unhex(t, specInfoGoldSource), mustAppend(t, dayz()), mustAppend(t, goldSourceInfo()), mustAppend(t, shipInfo())}
}

func playerSeeds(t testing.TB) [][]byte {
	return [][]byte{testutil.Unhex(t, specPlayers), testutil.Unhex(t, specPlayersShip), mustAppend(t, samplePlayers())}
}

func rulesSeeds(t testing.TB) [][]byte {
	return [][]byte{mustAppend(t, sampleRules()), []byte("\xFF\xFF\xFF\xFFE\x02\x00a\x001\x00b")}
}

func requestSeeds(t testing.TB) [][]byte {
	return [][]byte{testutil.Unhex(t, specInfoRequest), testutil.Unhex(t, specInfoRequestChallenge), testutil.Unhex(t, specPlayerChallengeRequest),
		testutil.Unhex(t, specRulesRequest), testutil.Unhex(t, specPingRequest), testutil.Unhex(t, specLegacyChallengeRequest)}
}

func fragmentSeeds(t testing.TB) [][]byte {
	payload := mustAppend(t, sampleRules())
	var seeds [][]byte
	for _, w := range []SplitWriter{{Size: 64}, {Format: SplitSourceNoSize, Size: 64}, {Format: SplitGoldSource, Size: 64}} {
		dgs, _ := w.AppendFragments(nil, 7, append(payload, make([]byte, 100)...))
		seeds = append(seeds, dgs[0], dgs[1])
	}
	seeds = append(seeds, mustAppend(t, Fragment{ID: 1, Total: 1, Compressed: true, DecompressedSize: 9, CRC: 1, Payload: []byte("BZh91AY&SY"), Format: SplitSourceNoSize}))
	return seeds
}

// joinDatagrams frames datagrams for FuzzReassemble: a 2-byte little-endian
// length before each.
func joinDatagrams(dgs [][]byte) []byte {
	var b []byte
	for _, d := range dgs {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(d)))
		b = append(b, d...)
	}
	return b
}

func reassembleSeeds(t testing.TB) [][]byte {
	payload := rulesPayload(t)[:300]
	var seeds [][]byte
	for _, w := range []SplitWriter{{Size: 100}, {Format: SplitSourceNoSize, Size: 100}, {Format: SplitGoldSource, Size: 100}} {
		dgs, _ := w.AppendFragments(nil, 3, payload)
		seeds = append(seeds, joinDatagrams([][]byte{dgs[2], dgs[0], dgs[0], dgs[1]}))
	}
	full := rulesPayload(t)
	// Block size 1 keeps bzip2's per-stream buffer small (400 KB, not 3.6 MB).
	bz := readFixture(t, "rules-payload-1.bz2")
	seeds = append(seeds, joinDatagrams(compressedSplit(t, SplitSourceNoSize, 4, bz, uint32(len(full)), crc32.ChecksumIEEE(full), 400)))
	return seeds
}

func addSeeds(f *testing.F, seeds [][]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
}

// stable checks that encoding a decoded value and decoding it again gives
// the same bytes.
func stable[T appender](t *testing.T, v T, parse func([]byte) (T, error)) {
	enc1, err := v.AppendBinary(nil)
	if err != nil {
		t.Fatalf("re-encode of a decoded value failed: %v", err)
	}
	v2, err := parse(enc1)
	if err != nil {
		t.Fatalf("decode of re-encoded value failed: %v\n% X", err, enc1)
	}
	enc2, err := v2.AppendBinary(nil)
	if err != nil || !bytes.Equal(enc1, enc2) {
		t.Fatalf("unstable round trip (%v):\n% X\n% X", err, enc1, enc2)
	}
}

// fuzzRoundTrip fuzzes a parser: errors must be *ParseErrors inside the
// input, and decoded values must survive encode -> decode -> encode.
func fuzzRoundTrip[T appender](f *testing.F, seeds [][]byte, parse func([]byte) (T, error)) {
	addSeeds(f, seeds)
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parse(b)
		if err != nil {
			checkParseError(t, err, len(b))
			return
		}
		stable(t, v, parse)
	})
}

func FuzzParseInfo(f *testing.F)    { fuzzRoundTrip(f, infoSeeds(f), ParseInfo) }
func FuzzParsePlayers(f *testing.F) { fuzzRoundTrip(f, playerSeeds(f), ParsePlayers) }

func FuzzParseRules(f *testing.F) {
	fuzzRoundTrip(f, rulesSeeds(f), func(b []byte) (*Rules, error) {
		r, err := ParseRules(b)
		if err != nil && r != nil && !errors.Is(err, ErrTruncated) {
			panic("partial rules with a non-truncation error: " + err.Error())
		}
		return r, err
	})
}

func FuzzParseRequest(f *testing.F) {
	addSeeds(f, requestSeeds(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRequest(b)
		if err != nil {
			checkParseError(t, err, len(b))
			return
		}
		enc, err := r.AppendBinary(nil)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if r2, err := ParseRequest(enc); err != nil || r2 != r {
			t.Fatalf("round trip %+v -> %+v, %v", r, r2, err)
		}
	})
}

func FuzzParseFragment(f *testing.F) {
	addSeeds(f, fragmentSeeds(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := ParseFragment(b)
		if err != nil {
			checkParseError(t, err, len(b))
			return
		}
		enc, err := fr.AppendBinary(nil)
		if err != nil || !bytes.Equal(enc, b) {
			t.Fatalf("re-encoded % X, %v; want the input", enc, err)
		}
	})
}

func FuzzReassemble(f *testing.F) {
	addSeeds(f, reassembleSeeds(f))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := Reassembler{MaxFragments: 16, MaxFragmentSize: 2048, MaxDecompressed: 1 << 16, MaxPending: 3}
		for len(in) >= 2 {
			n := int(binary.LittleEndian.Uint16(in))
			in = in[2:]
			dg := in[:min(n, len(in))]
			in = in[len(dg):]
			fr, err := ParseFragment(dg)
			if err != nil {
				continue
			}
			payload, done, err := r.Add(fr)
			if err != nil {
				continue
			}
			if done && (len(payload) < 4 || binary.LittleEndian.Uint32(payload) != HeaderSimple || len(payload) > 16*2048+(1<<16)) {
				t.Fatalf("completed payload of %d bytes: % X", len(payload), payload[:min(len(payload), 8)])
			}
			if len(r.pending) > 3 {
				t.Fatalf("%d replies pending, limit 3", len(r.pending))
			}
			for _, p := range r.pending {
				if len(p.ends) > 16 {
					t.Fatalf("%d fragments held, limit 16", len(p.ends))
				}
			}
		}
	})
}

// checkParseError asserts err is a *ParseError pointing inside the input.
func checkParseError(t *testing.T, err error, n int) {
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > n || pe.Err == nil {
		t.Fatalf("error %v is not a *ParseError within %d bytes", err, n)
	}
}

func FuzzParseBanned(f *testing.F) {
	addSeeds(f, [][]byte{[]byte("\xFF\xFF\xFF\xFFlYou have been banned from this server.\n\x00"), []byte("\xFF\xFF\xFF\xFFl")})
	f.Fuzz(func(t *testing.T, b []byte) {
		msg, err := ParseBanned(b)
		if err != nil {
			checkParseError(t, err, len(b))
			return
		}
		enc, err := AppendBanned(nil, msg)
		if err != nil {
			t.Fatalf("re-encode of %q: %v", msg, err)
		}
		if again, err := ParseBanned(enc); err != nil || !bytes.Equal(again, msg) {
			t.Fatalf("round trip %q -> %q, %v", msg, again, err)
		}
	})
}
