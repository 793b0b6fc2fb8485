package webrcon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"testing"
	"time"
)

// FuzzReadFrame: no input panics or allocates past the limit, and a frame
// read encodes back to the bytes it came from (the length in its shortest
// form, as RFC 6455 §5.2 requires).
func FuzzReadFrame(f *testing.F) {
	f.Add(closeFrame)
	f.Add([]byte("\x81\x05hello"))
	masked, _ := Frame{Fin: true, Op: OpText, Masked: true, Key: [4]byte{9, 8, 7, 6}, Payload: []byte(`{"Identifier":1001,"Message":"serverinfo","Name":"WebRcon"}`)}.AppendBinary(nil)
	f.Add(masked)
	f.Fuzz(func(t *testing.T, b []byte) {
		const max = 1 << 16
		fr, err := ReadFrame(bytes.NewReader(b), max)
		if err != nil {
			return
		}
		if len(fr.Payload) > max {
			t.Fatalf("%d-byte payload past the limit", len(fr.Payload))
		}
		enc, err := fr.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadFrame(bytes.NewReader(enc), max)
		if err != nil || !bytes.Equal(got.Payload, fr.Payload) || got.Op != fr.Op || got.Fin != fr.Fin {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzReadMessage: a stream of frames is read into messages within the
// limit, whatever it holds.
func FuzzReadMessage(f *testing.F) {
	f.Add([]byte("\x01\x02he\x80\x03llo"))
	f.Add([]byte("\x89\x00\x81\x02ok"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &wsConn{nc: nopConn{}, br: bufio.NewReader(bytes.NewReader(b)), maxMsg: 64}
		for range 100 {
			_, msg, err := c.readMessage()
			if err != nil {
				return
			}
			if len(msg) > 64 {
				t.Fatalf("%d-byte message past the limit", len(msg))
			}
		}
	})
}

// FuzzMessageEvent: whatever JSON a server sends, it becomes a message
// and an event without a panic, and the event keeps the raw bytes.
func FuzzMessageEvent(f *testing.F) {
	f.Add(`{"Message":"{\"Channel\":1,\"Message\":\"hi\",\"UserId\":\"1\",\"Username\":\"A\"}","Identifier":0,"Type":"Chat"}`)
	f.Add(`{"Message":"{\"PlayerId\":\"1\",\"Subject\":\"x\"}","Identifier":0,"Type":"Report"}`)
	f.Add(`{"Message":"1.2.3.4:5/765/N joined [w/765]","Identifier":0,"Type":"Generic"}`)
	f.Add(`{"Hostname":"x","Players":3}`)
	f.Fuzz(func(t *testing.T, raw string) {
		ParseServerInfo(raw)
		ParsePlayers(raw)
		var m Message
		if json.Unmarshal([]byte(raw), &m) != nil {
			return
		}
		if e := m.Event([]byte(raw)); string(e.Raw) != raw {
			t.Fatalf("event lost the raw message")
		}
	})
}

// nopConn is a net.Conn that takes writes and reads nothing: the control
// frames readMessage answers go nowhere.
type nopConn struct{ net.Conn }

func (nopConn) Write(b []byte) (int, error)      { return len(b), nil }
func (nopConn) Close() error                     { return nil }
func (nopConn) SetWriteDeadline(time.Time) error { return nil }
