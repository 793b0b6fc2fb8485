package cli

import "github.com/gsq-project/gsq/result"

// The error kinds rcon.go classifies by hand; package result defines them
// all (and docs/json.md documents them).
const (
	kindTimeout  = result.KindTimeout
	kindProtocol = result.KindProtocol
	kindAuth     = result.KindAuth
)

// errorKind classifies err for the JSON "kind" field and the exit code.
func errorKind(err error) result.Kind { return result.KindOf(err) }

// exitCodeFor maps an error kind to gsq's exit codes.
func exitCodeFor(kind result.Kind) int {
	switch kind {
	case "":
		return ExitOK
	case result.KindTimeout, result.KindUnreachable:
		return ExitTimeout
	case result.KindAuth:
		return ExitAuth
	case result.KindInvalid:
		return ExitUsage
	case result.KindCanceled:
		return ExitInterrupted
	}
	return ExitFailure
}

// resultExitCode is the exit code of one server's result: 0 when every
// section asked for answered, else the worst of its errors' codes.
func resultExitCode(r *result.Result) int {
	code := ExitOK
	if r.Err != nil {
		code = exitCodeFor(r.Err.Kind)
	}
	for _, e := range r.Errors {
		code = worseExit(code, exitCodeFor(e.Err.Kind))
	}
	return code
}

// worseExit combines the exit codes of several results: an interruption
// outranks a usage error, which outranks a failure (a protocol error, or
// authentication), which outranks a timeout, which outranks success.
func worseExit(a, b int) int {
	rank := func(c int) int {
		switch c {
		case ExitOK:
			return 0
		case ExitTimeout:
			return 1
		case ExitUsage:
			return 3
		case ExitInterrupted:
			return 4
		}
		return 2
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}
