//go:build interop

package bzip2

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestInteropReference decompresses every input with the reference bzip2
// command (libbz2), which checks the block and stream CRCs.
func TestInteropReference(t *testing.T) {
	bin, err := exec.LookPath("bzip2")
	if err != nil {
		t.Skip("no bzip2 command")
	}
	for name, in := range inputs() {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(bin, "-dc")
			cmd.Stdin = bytes.NewReader(Compress(nil, in))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("bzip2 -dc: %v: %s", err, stderr.Bytes())
			}
			if !bytes.Equal(out, in) {
				t.Fatalf("bzip2 -dc gave %d bytes for %d", len(out), len(in))
			}
		})
	}
}

// TestInteropIncompleteCode: the reference bzip2 refuses the streams
// whose Huffman tables are no complete code, as Decode does and
// compress/bzip2 does not (TestIncompleteCode).
func TestInteropIncompleteCode(t *testing.T) {
	bin, err := exec.LookPath("bzip2")
	if err != nil {
		t.Fatal("no bzip2 command: run .ci/install-peers")
	}
	for _, tc := range incompleteCodes {
		cmd := exec.Command(bin, "-dc")
		cmd.Stdin = strings.NewReader(tc.src)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err == nil || !strings.Contains(stderr.String(), "Data integrity error") {
			t.Errorf("%s: bzip2 -dc gave %q, %v: %s; want a data integrity error", tc.name, out, err, stderr.Bytes())
		}
	}
}
