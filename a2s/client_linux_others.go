//go:build linux && !amd64 && !arm64

package a2s

// sysSendmmsg is 0 where its number is not recorded here: requests are
// then written one by one.
const sysSendmmsg = 0
