//go:build unix

package results

import (
	"runtime"
	"syscall"
	"time"
)

// Usage is a reading of the process's own resource use.
type Usage struct {
	At     time.Time
	CPU    time.Duration // user + system
	MaxRSS int64         // bytes
}

// ReadUsage reads getrusage(RUSAGE_SELF).
func ReadUsage() Usage {
	var ru syscall.Rusage
	u := Usage{At: time.Now()}
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		u.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		u.MaxRSS = int64(ru.Maxrss) * 1024 // Linux: KiB
		if runtime.GOOS == "darwin" {
			u.MaxRSS = int64(ru.Maxrss)
		}
	}
	return u
}
