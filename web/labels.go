package web

import (
	"context"
	"strings"
)

// maxSelectors bounds the label selectors of one request.
const maxSelectors = 16

// labelMatch is one label selector: the label named key has value, or,
// when any is set, the server has the label at all.
type labelMatch struct {
	key, value string
	any        bool
}

// selector is the label selectors of a request (?label=region:eu&label=game:cs2):
// a server matches when it matches every one.
type selector []labelMatch

// parseSelector reads ?label= values: "KEY:VALUE" (the label has that
// value) or "KEY" (the server has the label).
func parseSelector(values []string) (selector, error) {
	if len(values) > maxSelectors {
		return nil, badParam("label", "at most %d selectors", maxSelectors)
	}
	var sel selector
	for _, v := range values {
		k, val, ok := strings.Cut(v, ":")
		if k == "" || len(v) > maxLabelSelector {
			return nil, badParam("label", "%q: want KEY:VALUE or KEY", v)
		}
		sel = append(sel, labelMatch{key: k, value: val, any: !ok})
	}
	return sel, nil
}

// maxLabelSelector bounds one selector's bytes.
const maxLabelSelector = 512

// matches reports whether labels satisfy every selector.
func (sel selector) matches(labels map[string]string) bool {
	for _, m := range sel {
		v, ok := labels[m.key]
		if !ok || !m.any && v != m.value {
			return false
		}
	}
	return true
}

// labelsOf returns a function that gives a server's labels: the
// monitor's live ones for the servers it watches, and for the others
// (no longer monitored) those the store kept, read once when first
// needed.
func (h *Handler) labelsOf(ctx context.Context) func(server string) (map[string]string, error) {
	live := make(map[string]map[string]string)
	for _, s := range h.live.Servers() {
		live[s.Name] = s.Labels
	}
	var stored map[string]map[string]string
	return func(server string) (map[string]string, error) {
		if l, ok := live[server]; ok {
			return l, nil
		}
		if stored == nil {
			servers, err := h.store.Servers(ctx)
			if err != nil {
				return nil, err
			}
			stored = make(map[string]map[string]string, len(servers))
			for _, s := range servers {
				stored[s.Name] = s.Labels
			}
		}
		return stored[server], nil
	}
}
