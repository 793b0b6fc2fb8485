package cli

import (
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gsq-project/gsq/internal/sim"
)

// loadContent reads a simulated server's content from a YAML file: the
// keys of sim.Content, snake_case, over the defaults. An unknown key is an
// error, so a typo does not silently serve defaults, and every error names
// the key and its line in words, not in Go types.
func loadContent(path string) (sim.Content, error) {
	c := sim.Default()
	data, err := os.ReadFile(path)
	if err != nil {
		return c, usageError("%v", err)
	}
	doc, err := parseYAMLDoc(data)
	if err != nil {
		return c, usageError("%s: %v", path, err)
	}
	if doc != nil {
		if err := decodeYAML(reflect.ValueOf(&c).Elem(), doc, ""); err != nil {
			return c, usageError("%s: %v", path, err)
		}
	}
	if err := c.Validate(); err != nil {
		return c, usageError("%s: %v", path, err)
	}
	return c, nil
}

// decodeYAML decodes n into v, a struct with yaml tags, a slice of them, or
// a scalar; key is where v sits, for errors.
func decodeYAML(v reflect.Value, n *yaml.Node, key string) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Tag == "!!null" {
		v.SetZero()
		return nil
	}
	switch {
	case v.Kind() == reflect.Struct && v.Type() != reflect.TypeFor[time.Duration]():
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%swant keys and values (line %d)", in(key), n.Line)
		}
		keys := yamlKeys(v.Type())
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			field, ok := keys[k.Value]
			if !ok {
				return fmt.Errorf("unknown key %q %s(line %d); known keys: %s", k.Value, in(key), k.Line, strings.Join(yamlKeyList(v.Type()), ", "))
			}
			if err := decodeYAML(v.Field(field), val, k.Value); err != nil {
				return err
			}
		}
		return nil
	case v.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s (line %d): want a list", key, n.Line)
		}
		list := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			if err := decodeYAML(list.Index(i), item, key); err != nil {
				return err
			}
		}
		v.Set(list)
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("%s (line %d): want %s, not a list or keys and values", key, n.Line, describeType(v.Type()))
	}
	if n.Decode(v.Addr().Interface()) != nil {
		return fmt.Errorf("%s (line %d): %s is not %s", key, n.Line, strconv.Quote(n.Value), describeType(v.Type()))
	}
	return nil
}

// in is " in KEY " for an error inside key, or "" at the top level.
func in(key string) string {
	if key == "" {
		return ""
	}
	return "in " + key + " "
}

// yamlKeys maps a struct's yaml keys to its field indexes.
func yamlKeys(t reflect.Type) map[string]int {
	keys := map[string]int{}
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "" {
			keys[name] = i
		}
	}
	return keys
}

// yamlKeyList lists a struct's yaml keys in field order.
func yamlKeyList(t reflect.Type) []string {
	var list []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "" {
			list = append(list, name)
		}
	}
	return list
}

// describeType says in words what a YAML value must be to fit t.
func describeType(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return "a duration such as 90s or 5m"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.String:
		return "text"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64 && t.Bits() < 64:
		return fmt.Sprintf("a whole number from %d to %d", int64(-1)<<(t.Bits()-1), int64(1)<<(t.Bits()-1)-1)
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 && t.Bits() < 64:
		return fmt.Sprintf("a whole number from 0 to %d", uint64(1)<<t.Bits()-1)
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "a whole number"
	}
	return "a value of the right kind"
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
			return p, fmt.Errorf("--player %q: %q is not a duration such as 90s or 5m", s, parts[2])
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
