package results

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/mcpbench/mcpbench/internal/textfmt"
)

// ProcSample is a reading of a process from /proc (Linux).
type ProcSample struct {
	At      time.Time
	CPU     time.Duration // user + system since the process started
	RSS     int64         // resident set, bytes
	FDs     int           // open file descriptors
	Threads int
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// ErrNoProc is returned where /proc is not available.
var ErrNoProc = errors.New("process sampling needs Linux /proc")

// ReadProc samples process pid ("self" for pid 0) from /proc.
func ReadProc(pid int) (ProcSample, error) {
	if runtime.GOOS != "linux" {
		return ProcSample{}, ErrNoProc
	}
	dir := "/proc/self"
	if pid > 0 {
		dir = "/proc/" + strconv.Itoa(pid)
	}
	s := ProcSample{At: time.Now()}
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return s, fmt.Errorf("target pid %d: %w", pid, err)
	}
	// Fields after the command name (which may contain spaces) in parens.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
		f := bytes.Fields(stat[i+1:])
		if len(f) > 13 {
			ut, _ := strconv.ParseInt(string(f[11]), 10, 64)
			st, _ := strconv.ParseInt(string(f[12]), 10, 64)
			s.CPU = time.Duration(ut+st) * time.Second / clockTicks
		}
	}
	status, err := os.ReadFile(dir + "/status")
	if err == nil {
		for _, line := range bytes.Split(status, []byte("\n")) {
			switch {
			case bytes.HasPrefix(line, []byte("VmRSS:")):
				f := bytes.Fields(line)
				if len(f) >= 2 {
					kb, _ := strconv.ParseInt(string(f[1]), 10, 64)
					s.RSS = kb * 1024
				}
			case bytes.HasPrefix(line, []byte("Threads:")):
				f := bytes.Fields(line)
				if len(f) >= 2 {
					s.Threads, _ = strconv.Atoi(string(f[1]))
				}
			}
		}
	}
	if ents, err := os.ReadDir(dir + "/fd"); err == nil {
		s.FDs = len(ents)
	}
	return s, nil
}

// ProcRow is a process over one interval (for intervals.csv).
type ProcRow struct {
	Cores   float64 // CPU used over the interval, in cores
	RSSMB   float64
	FDs     int
	Threads int
}

// ProcDelta describes a process between two samples.
func ProcDelta(a, b ProcSample) ProcRow {
	r := ProcRow{RSSMB: textfmt.Round3(float64(b.RSS) / (1 << 20)), FDs: b.FDs, Threads: b.Threads}
	if secs := b.At.Sub(a.At).Seconds(); secs > 0 {
		r.Cores = textfmt.Round3((b.CPU - a.CPU).Seconds() / secs)
	}
	return r
}

// TargetSummary is the target process over the measured window
// (--target-pid).
type TargetSummary struct {
	PID        int     `json:"pid"`
	CPUSeconds float64 `json:"cpu_s"`
	CPUPerOpUS float64 `json:"cpu_us_per_op"`
	Cores      float64 `json:"cores_used"`
	RSSStartMB float64 `json:"rss_start_mb"`
	RSSEndMB   float64 `json:"rss_end_mb"`
	RSSMaxMB   float64 `json:"rss_max_mb"`
	FDsStart   int     `json:"fds_start"`
	FDsEnd     int     `json:"fds_end"`
	FDsMax     int     `json:"fds_max"`
	Threads    int     `json:"threads_end"`
	Error      string  `json:"error,omitempty"` // why sampling failed
}
