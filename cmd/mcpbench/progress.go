package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/workload"
)

// progress prints live progress on stderr: on a terminal one line updated
// in place every interval; otherwise a plain line every 5 s.
type progress struct {
	w       io.Writer
	quiet   bool
	tty     bool
	last    time.Time
	wrote   bool
	resumes int64
	errors  int64
	total   time.Duration
	every   time.Duration
}

func newProgress(w io.Writer, quiet bool, plan *workload.Plan) *progress {
	p := &progress{w: w, quiet: quiet, every: 5 * time.Second}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	p.total = plan.Profile.Warmup.D() + plan.Profile.Duration.D()
	return p
}

func (p *progress) line(pr workload.Progress) string {
	iv := pr.Interval
	secs := iv.End.Sub(iv.Start).Seconds()
	all := iv.All
	rate := 0.0
	if secs > 0 {
		rate = float64(all.Count) / secs
	}
	p.errors += all.Errors
	p.resumes += all.Resumes
	p99 := metrics.LatencyOf(all.Response).P99
	var b strings.Builder
	fmt.Fprintf(&b, "[%5.1fs/%.0fs %-8s] %8.1f ops/s", pr.Elapsed.Seconds(), p.total.Seconds(), pr.Phase, rate)
	if pr.TargetRate > 0 {
		fmt.Fprintf(&b, " (target %.4g)", pr.TargetRate)
	}
	fmt.Fprintf(&b, "  p99 %s ms  errors %d  resumes %d  VUs %d  sessions %d", fmtMS(p99), p.errors, p.resumes, pr.VUs, pr.Sessions)
	if pr.Streams > 0 {
		fmt.Fprintf(&b, "  GET streams %d", pr.Streams)
	}
	if pr.Dropped > 0 {
		fmt.Fprintf(&b, "  dropped %d", pr.Dropped)
	}
	return b.String()
}

// interval is the engine's OnInterval hook.
func (p *progress) interval(pr workload.Progress) {
	line := p.line(pr) // always, to keep running totals
	if p.quiet {
		return
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.wrote = true
		return
	}
	now := time.Now()
	if p.last.IsZero() || now.Sub(p.last) >= p.every || pr.Phase == "stopping" {
		fmt.Fprintln(p.w, line)
		p.last = now
	}
}

func (p *progress) done() {
	if p.tty && p.wrote {
		fmt.Fprintln(p.w)
	}
}

func fmtMS(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.0f", v)
}
