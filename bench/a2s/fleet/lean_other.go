//go:build !(linux && (amd64 || arm64))

package main

import (
	"errors"
	"net/netip"

	"github.com/gsq-project/gsq/a2s/a2stest"
)

func startLean(int, a2stest.Profile) ([]netip.AddrPort, error) {
	return nil, errors.New("the lean fleet needs Linux (epoll); use -lean=false")
}
