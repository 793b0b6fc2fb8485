package main

// System call numbers of linux/amd64 (the syscall package lacks sendmmsg).
const (
	sysRecvmmsg = 299
	sysSendmmsg = 307
)
