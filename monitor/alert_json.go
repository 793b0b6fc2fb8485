package monitor

import "encoding/json"

// FormatJSON is gsq's own webhook format: one [Alert] object per POST,
// or an [AlertGroup] of several, as docs/monitor-config.md documents
// them. It is the format of a URL that no other format claims.
const FormatJSON Format = "json"

// maxJSONGroup is how many alerts one "json" message carries at most.
const maxJSONGroup = 100

func init() { registerProvider(providerKind{format: FormatJSON, new: postJSON(jsonBody)}) }

// jsonBody is the first alerts as JSON, each with its one-line Text: the
// Alert itself when there is one, else an AlertGroup of up to
// maxJSONGroup.
func jsonBody(alerts []*Alert) ([]byte, int, error) {
	if len(alerts) == 1 {
		b, err := json.Marshal(withText(alerts[0]))
		return b, 1, err
	}
	alerts = alerts[:min(len(alerts), maxJSONGroup)]
	g := AlertGroup{Version: AlertVersion, Kind: "group", Time: latest(alerts), Text: headline(alerts, oneLine), Count: len(alerts)}
	for _, a := range alerts {
		g.Alerts = append(g.Alerts, withText(a))
	}
	b, err := json.Marshal(&g)
	return b, len(alerts), err
}

// withText is a copy of a with its Text filled in.
func withText(a *Alert) *Alert {
	b := *a
	b.Text = a.describe(oneLine)
	return &b
}
