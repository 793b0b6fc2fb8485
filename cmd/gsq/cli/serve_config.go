package cli

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gsq-project/gsq/internal/sim"
)

// loadContent reads a simulated server's content from a YAML file (the
// fields of sim.Content, snake_case). Unknown keys are an error, so a typo
// does not silently serve defaults.
func loadContent(path string) (sim.Content, error) {
	c := sim.Default()
	data, err := os.ReadFile(path)
	if err != nil {
		return c, usageError("%v", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return c, usageError("%s: %v", path, err)
	}
	if err := c.Validate(); err != nil {
		return c, usageError("%s: %v", path, err)
	}
	return c, nil
}

// parsePlayer reads a --player flag: NAME[:SCORE[:DURATION]].
func parsePlayer(s string) (sim.Player, error) {
	parts := strings.SplitN(s, ":", 3)
	p := sim.Player{Name: parts[0]}
	if p.Name == "" {
		return p, fmt.Errorf("--player %q: empty name", s)
	}
	if len(parts) > 1 {
		n, err := strconv.ParseInt(parts[1], 10, 32)
		if err != nil {
			return p, fmt.Errorf("--player %q: score %q is not a whole number", s, parts[1])
		}
		p.Score = int32(n)
	}
	if len(parts) > 2 {
		d, err := time.ParseDuration(parts[2])
		if err != nil {
			return p, fmt.Errorf("--player %q: %v", s, err)
		}
		p.Duration = d
	}
	return p, nil
}

// parseRule reads a --rule flag: NAME=VALUE.
func parseRule(s string) (sim.Rule, error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return sim.Rule{}, fmt.Errorf("--rule %q: want NAME=VALUE", s)
	}
	return sim.Rule{Name: name, Value: value}, nil
}
