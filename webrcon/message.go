package webrcon

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/gsq-project/gsq/console"
)

// Request is what a client sends: a command line and an Identifier the
// reply will carry (Facepunch/webrcon, js/rconService.js). The keys are
// PascalCase; Rust's server is said to crash on others.
type Request struct {
	Identifier int
	Message    string
	Name       string
}

// Message is what the server sends: a reply (the request's Identifier) or
// a broadcast (Identifier 0; some servers use -1).
type Message struct {
	Message    string
	Identifier int
	// Type is "Generic", "Log", "Warning", "Error", "Chat" or "Report".
	Type       string
	Stacktrace string `json:",omitempty"`
}

// The message types.
const (
	TypeGeneric = "Generic"
	TypeLog     = "Log"
	TypeWarning = "Warning"
	TypeError   = "Error"
	TypeChat    = "Chat"
	TypeReport  = "Report"
)

// Chat is the JSON a Chat message carries in its Message
// (Facepunch/webrcon, js/chat.js).
type Chat struct {
	Channel  int
	Message  string
	UserID   string `json:"UserId"`
	Username string
	Color    string
	Time     int64
}

// chatChannels names Chat.Channel's values, as Rust numbers them.
var chatChannels = []string{"global", "team", "server", "cards", "local", "clan", "externaldm"}

// ChannelName names a chat channel number ("global", "team", ...).
func ChannelName(ch int) string {
	if ch >= 0 && ch < len(chatChannels) {
		return chatChannels[ch]
	}
	return "unknown"
}

// Report is the JSON a Report message (a player's F7 report) carries.
type Report struct {
	PlayerID   string `json:"PlayerId"`
	PlayerName string
	TargetID   string `json:"TargetId"`
	TargetName string
	Subject    string
	Message    string
	Type       string
}

// ServerInfo is the answer to "serverinfo" (the field names of Facepunch's
// serverInfo.js and Geevo/RustWebRcon's RustServerInfo).
type ServerInfo struct {
	Hostname        string
	MaxPlayers      int
	Players         int
	Queued          int
	Joining         int
	EntityCount     int
	GameTime        string
	Uptime          int
	Map             string
	Framerate       float64
	Memory          int
	Collections     int
	NetworkIn       int
	NetworkOut      int
	Restarting      bool
	SaveCreatedTime string
}

// Player is one entry of the answer to "playerlist".
type Player struct {
	SteamID          string
	OwnerSteamID     string
	DisplayName      string
	Ping             int
	Address          string
	ConnectedSeconds int
	// ViolationLevel is Rust's "VoiationLevel" (sic).
	ViolationLevel float64 `json:"VoiationLevel"`
	CurrentLevel   float64
	UnspentXp      float64
	Health         float64
}

// ParseServerInfo decodes the answer to "serverinfo".
func ParseServerInfo(text string) (*ServerInfo, error) {
	var si ServerInfo
	if err := json.Unmarshal([]byte(text), &si); err != nil {
		return nil, &ParseError{What: "serverinfo", Err: err}
	}
	return &si, nil
}

// ParsePlayers decodes the answer to "playerlist".
func ParsePlayers(text string) ([]Player, error) {
	var ps []Player
	if err := json.Unmarshal([]byte(text), &ps); err != nil {
		return nil, &ParseError{What: "playerlist", Err: err}
	}
	return ps, nil
}

// ParseError is an answer or message that is not the JSON it should be.
type ParseError struct {
	What string // "message", "serverinfo", "playerlist", "chat", "report"
	Err  error
}

func (e *ParseError) Error() string { return "webrcon: parse " + e.What + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// Event turns a message the server sent unasked into an event: Chat and
// Report decoded from the JSON they carry, players joining and leaving
// read from Rust's log lines, everything else a log line.
func (m *Message) Event(raw []byte) console.Event {
	e := console.Event{Time: time.Now(), Kind: console.KindLog, Text: m.Message, Raw: raw}
	switch m.Type {
	case TypeChat:
		var c Chat
		if json.Unmarshal([]byte(m.Message), &c) == nil {
			e.Kind, e.Text, e.Player, e.PlayerID, e.Channel = console.KindChat, c.Message, c.Username, c.UserID, ChannelName(c.Channel)
		}
	case TypeReport:
		var r Report
		if json.Unmarshal([]byte(m.Message), &r) == nil {
			e.Kind, e.Player, e.PlayerID = console.KindReport, r.PlayerName, r.PlayerID
			e.Text = r.Subject
			if r.TargetName != "" {
				e.Text += " (about " + r.TargetName + ")"
			}
			if r.Message != "" {
				e.Text += ": " + r.Message
			}
		}
	default:
		// "203.0.113.5:61234/76561198000000001/Name joined [windows/76561198000000001]"
		// "203.0.113.5:61234/76561198000000001/Name disconnecting: closing"
		switch who, _, ok := strings.Cut(m.Message, " joined ["); {
		case ok:
			e.Kind = console.KindJoin
			e.PlayerID, e.Player = splitWho(who)
		default:
			if who, _, ok := strings.Cut(m.Message, " disconnecting: "); ok {
				e.Kind = console.KindLeave
				e.PlayerID, e.Player = splitWho(who)
			}
		}
	}
	return e
}

// splitWho reads Rust's "address/steamid/name".
func splitWho(s string) (id, name string) {
	parts := strings.SplitN(s, "/", 3)
	if len(parts) != 3 {
		return "", s
	}
	return parts[1], parts[2]
}
