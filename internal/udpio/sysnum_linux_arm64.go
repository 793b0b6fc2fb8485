package udpio

import "syscall"

const sysSendmmsg = syscall.SYS_SENDMMSG
