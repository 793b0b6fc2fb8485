package cli

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// parseYAMLDoc parses a config file into its document node (nil for an
// empty file). Its errors name the line at fault, without the "yaml: "
// prefix, and a key given twice in one mapping is an error (yaml.v3
// reports that only when decoding into a Go map).
func parseYAMLDoc(data []byte) (*yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlSyntaxError(data, err)
	}
	if len(root.Content) == 0 {
		return nil, nil
	}
	return root.Content[0], checkRepeatedKeys(root.Content[0])
}

var yamlLineError = regexp.MustCompile(`^yaml: line (\d+): (.+)$`)

// maxYAMLLineSearch bounds the lines yamlSyntaxError parses again.
const maxYAMLLineSearch = 500

// yamlSyntaxError is err without its "yaml: " prefix, with the line of the
// fault. For some faults (a key indented wrongly, a flow sequence left
// open) yaml.v3 names the line where the enclosing block starts, often
// line 1, not the line at fault: the first prefix of whole lines, from
// that one on, that fails with the same problem ends on the right one (a
// prefix that fails otherwise cut a construct that later lines close).
func yamlSyntaxError(data []byte, err error) error {
	m := yamlLineError.FindStringSubmatch(err.Error())
	if m == nil {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	line, _ := strconv.Atoi(m[1])
	problem := m[2]
	end := 0
	for n := 1; n < line+maxYAMLLineSearch && end < len(data); n++ {
		if i := bytes.IndexByte(data[end:], '\n'); i >= 0 {
			end += i + 1
		} else {
			end = len(data)
		}
		if n < line {
			continue
		}
		var node yaml.Node
		if perr := yaml.Unmarshal(data[:end], &node); perr != nil && strings.HasSuffix(perr.Error(), ": "+problem) {
			line = n
			break
		}
	}
	return fmt.Errorf("line %d: %s", line, problem)
}

// checkRepeatedKeys reports the first key that a mapping under n gives
// twice.
func checkRepeatedKeys(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if first, ok := seen[k.Value]; ok && k.Kind == yaml.ScalarNode {
				return fmt.Errorf("line %d: key %q given twice (first on line %d)", k.Line, k.Value, first)
			}
			seen[k.Value] = k.Line
		}
	}
	for _, c := range n.Content {
		if err := checkRepeatedKeys(c); err != nil {
			return err
		}
	}
	return nil
}
