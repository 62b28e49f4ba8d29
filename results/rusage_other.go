//go:build !unix

package results

import "time"

// Usage is a reading of the process's own resource use.
type Usage struct {
	At     time.Time
	CPU    time.Duration
	MaxRSS int64
}

// ReadUsage is not available on this platform: CPU and RSS read as zero.
func ReadUsage() Usage { return Usage{At: time.Now()} }
