package cli

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gsq-project/gsq/internal/duration"
	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/internal/yamlconf"
)

// loadContent reads a simulated server's content from a YAML file: the
// keys of sim.Content (its yaml tags), over the defaults. An unknown key is
// an error, so a typo does not silently serve defaults, and every problem
// is reported at its line and column, in words, not in Go types.
func loadContent(path string) (sim.Content, error) {
	c := sim.Default()
	data, err := os.ReadFile(path)
	if err != nil {
		return c, usageError("%v", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return c, usageError("%s: %s", path, yamlconf.SyntaxMessage(data, err))
	}
	if len(doc.Content) > 0 {
		p := &yamlconf.Problems{Source: path}
		readStruct(p, "", doc.Content[0], reflect.ValueOf(&c).Elem())
		if err := p.Err("config"); err != nil {
			return c, usageError("%v", err)
		}
	}
	if err := c.Validate(); err != nil {
		return c, usageError("%s: %v", path, err)
	}
	return c, nil
}

// readStruct reads the mapping n, at path, into v, a struct whose fields
// have yaml tags.
func readStruct(p *yamlconf.Problems, path string, n *yaml.Node, v reflect.Value) {
	m := yamlconf.NewMapping(p, path, n)
	if m == nil {
		return
	}
	for i := range v.NumField() {
		// Every key is asked for, so that an unknown one is matched to
		// the known key it is closest to.
		if key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ","); key != "" && m.Get(key) != nil {
			readField(p, m, key, v.Field(i))
		}
	}
	m.Done()
}

// readField reads key of m into v: text, true or false, a whole number
// that fits v, a duration, an optional one of these (a pointer), or a list
// of structs. Nothing (null) is the zero value.
func readField(p *yamlconf.Problems, m *yamlconf.Mapping, key string, v reflect.Value) {
	if yamlconf.IsNull(m.Get(key)) {
		v.SetZero()
		return
	}
	t := v.Type()
	switch {
	case t == reflect.TypeFor[time.Duration]():
		var d time.Duration
		if m.Duration(key, &d, math.MinInt64, math.MaxInt64) {
			v.SetInt(int64(d))
		}
	case t.Kind() == reflect.String:
		var s string
		if m.Str(key, &s) {
			v.SetString(s)
		}
	case t.Kind() == reflect.Bool:
		var b bool
		if m.Bool(key, &b) {
			v.SetBool(b)
		}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if t.Bits() < 64 {
			lo, hi = -1<<(t.Bits()-1), 1<<(t.Bits()-1)-1
		}
		var x int64
		if m.Int64(key, &x, lo, hi) {
			v.SetInt(x)
		}
	case t.Kind() >= reflect.Uint8 && t.Kind() <= reflect.Uint32:
		var x int64
		if m.Int64(key, &x, 0, 1<<t.Bits()-1) {
			v.SetUint(uint64(x))
		}
	case t.Kind() == reflect.Pointer && t.Elem().Kind() != reflect.Struct:
		// An optional value: what it points to, read as that type.
		elem := reflect.New(t.Elem())
		readField(p, m, key, elem.Elem())
		v.Set(elem)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		list := reflect.MakeSlice(t, 0, 0)
		m.List(key, func(path string, item *yaml.Node) {
			elem := reflect.New(t.Elem()).Elem()
			readStruct(p, path, item, elem)
			list = reflect.Append(list, elem)
		})
		v.Set(list)
	default: // a field type of sim.Content this reader does not know yet
		p.At(m.Get(key), m.Sub(key), "cannot be set in a config file")
	}
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
		d, err := duration.Parse(parts[2])
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
