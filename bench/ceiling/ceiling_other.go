//go:build !(linux && (amd64 || arm64))

package main

import (
	"errors"
	"net/netip"
	"time"
)

func scan([]netip.AddrPort, config) (int, error) {
	return 0, errors.New("the lean reference client runs on linux/amd64 and linux/arm64 only")
}

func cpuTime() time.Duration { return 0 }
