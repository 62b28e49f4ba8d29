//go:build unix

package launch

import "syscall"

// RaiseFileLimit lifts the soft open-file limit to the hard limit: a run
// with thousands of VUs holds two sockets per VU.
func RaiseFileLimit() {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil || rl.Cur >= rl.Max {
		return
	}
	rl.Cur = rl.Max
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
}
