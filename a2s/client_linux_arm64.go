package a2s

// sysSendmmsg is the sendmmsg(2) system call number (not in package syscall).
const sysSendmmsg = 269
