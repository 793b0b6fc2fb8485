// Package cpuprof starts a CPU profile for the benchmark helpers.
package cpuprof

import (
	"log"
	"os"
	"runtime/pprof"
)

// Start writes a CPU profile to path until the returned function is
// called. An empty path profiles nothing.
func Start(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
