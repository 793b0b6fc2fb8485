//go:build unix

package fdlimit

import "syscall"

// OpenFiles returns the process's soft limit on open files, 0 if
// unknown. RLIM_INFINITY is the largest value a uint64 holds.
func OpenFiles() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	return uint64(lim.Cur)
}
