package main

// System call numbers of linux/arm64 (the syscall package lacks sendmmsg).
const (
	sysRecvmmsg = 243
	sysSendmmsg = 269
)
