package udpio

// sysSendmmsg is sendmmsg(2) on linux/amd64, which package syscall does
// not list (it lists recvmmsg).
const sysSendmmsg = 307
