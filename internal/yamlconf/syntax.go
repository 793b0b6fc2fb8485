package yamlconf

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxLineSearch bounds the lines SyntaxError parses again.
const maxLineSearch = 500

var yamlLineError = regexp.MustCompile(`^yaml: line (\d+): (.+)$`)

// SyntaxError takes apart err, the error of parsing data with yaml.v3,
// into the line at fault (0 when unknown) and the problem, without the
// "yaml: " prefix. For some faults (a key indented wrongly, a flow
// sequence left open) yaml.v3 names the line where the enclosing block
// starts, often line 1, not the line at fault: the first prefix of whole
// lines, from that one on, that fails with the same problem ends on the
// right one (a prefix that fails otherwise cut a construct that later
// lines close). The search is bounded by maxLineSearch lines.
func SyntaxError(data []byte, err error) (line int, problem string) {
	m := yamlLineError.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, strings.TrimPrefix(err.Error(), "yaml: ")
	}
	line, _ = strconv.Atoi(m[1])
	problem = m[2]
	end := 0
	for n := 1; n < line+maxLineSearch && end < len(data); n++ {
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
			return n, problem
		}
	}
	return line, problem
}

// SyntaxMessage is SyntaxError as one message: "line N: problem".
func SyntaxMessage(data []byte, err error) string {
	line, problem := SyntaxError(data, err)
	if line == 0 {
		return problem
	}
	return "line " + strconv.Itoa(line) + ": " + problem
}
