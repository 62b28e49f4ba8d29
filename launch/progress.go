package launch

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress shows a run's progress on stderr: on a terminal, a live bar
// (mpb) with elapsed and remaining time, current rate, p99, errors and
// resumes; otherwise (or with --quiet) one plain line every 5 s; nothing
// with --no-progress.
type progress struct {
	w     io.Writer
	off   bool
	plain bool
	total time.Duration
	every time.Duration

	mu         sync.Mutex
	last       time.Time
	elapsed    time.Duration // at the last interval
	elapsedAt  time.Time     // when that interval arrived
	status     string
	errors     int64
	reconnects int64
	streams    string // the standalone streams' name ("": GET streams)

	p     *mpb.Progress
	bar   *mpb.Bar
	ended bool
}

func newProgress(w io.Writer, quiet, off bool, plan *workload.Plan) *progress {
	pr := &progress{w: w, off: off, plain: true, every: 5 * time.Second}
	pr.total = plan.Warmup + plan.Window
	if f, ok := w.(*os.File); ok && !quiet && !off && termWidth(f) >= 40 {
		pr.plain = false
	}
	if !pr.plain && !off {
		pr.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(24), mpb.WithRefreshRate(200*time.Millisecond))
		pr.bar = pr.p.New(pr.total.Milliseconds(), mpb.BarStyle().Lbound("[").Rbound("]"),
			mpb.PrependDecorators(decor.Any(func(decor.Statistics) string {
				pr.mu.Lock()
				defer pr.mu.Unlock()
				return pr.clock()
			})),
			mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
				pr.mu.Lock()
				defer pr.mu.Unlock()
				return pr.status
			})),
		)
	}
	return pr
}

// clock renders elapsed/total (mu held), running between intervals.
func (pr *progress) clock() string {
	e := pr.elapsed
	if !pr.elapsedAt.IsZero() {
		e = min(e+time.Since(pr.elapsedAt), pr.total)
	}
	return fmt.Sprintf("%5.1fs/%.0fs", e.Seconds(), pr.total.Seconds())
}

// line renders an interval's figures (mu held).
func (pr *progress) line(p *results.IntervalRecord) string {
	row := p.Row
	pr.errors += row.All.Errors
	pr.reconnects += row.Reconnects // resumes of response and GET streams
	var b strings.Builder
	if p.Phase == results.PhaseWarmup {
		// Warm-up ops are not recorded: no rate or latency to show yet.
		fmt.Fprintf(&b, "%-8s (not measured)", p.Phase)
		if p.TargetRate > 0 {
			fmt.Fprintf(&b, " target %.4g ops/s", p.TargetRate)
		}
		fmt.Fprintf(&b, "  reconnects %d  VUs %d  sessions %d", pr.reconnects, p.VUs, p.Sessions)
	} else {
		fmt.Fprintf(&b, "%-8s %8.1f ops/s", p.Phase, row.Rate)
		if p.TargetRate > 0 {
			fmt.Fprintf(&b, " (target %.4g)", p.TargetRate)
		}
		fmt.Fprintf(&b, "  p99 %s ms  errors %d  reconnects %d  VUs %d  sessions %d", fmtMS(row.All.P99), pr.errors, pr.reconnects, p.VUs, p.Sessions)
	}
	if p.Streams > 0 {
		fmt.Fprintf(&b, "  %s %d", cmp.Or(pr.streams, "GET streams"), p.Streams)
	}
	if p.Dropped > 0 {
		fmt.Fprintf(&b, "  dropped %d", p.Dropped)
	}
	if p.Remaining > 0 {
		fmt.Fprintf(&b, "  %s left", p.Remaining.Round(time.Second))
	}
	return b.String()
}

// Start implements results.Sink: the requested features the run found it
// cannot apply are named before the load starts (above the bar, or as
// plain lines; also with --no-progress).
func (pr *progress) Start(info *results.RunInfo) {
	var w io.Writer = pr.w
	if pr.p != nil {
		w = pr.p // above the bar
	}
	for _, n := range info.NotApplicable {
		fmt.Fprintf(w, "mcpbench: %s\n", n)
	}
	if driver.IsModern(info.ProtocolNegotiated) {
		pr.mu.Lock()
		pr.streams = "subscriptions/listen streams"
		pr.mu.Unlock()
	}
}

// End implements results.Sink: the live bar ends so the summary prints
// below it.
func (pr *progress) End(*results.RunEnd) { pr.done() }

// Interval implements results.Sink: one line (or the bar's status) per
// interval.
func (pr *progress) Interval(p *results.IntervalRecord) {
	if pr.bar != nil {
		// Not under mu: the bar's renderer calls the decorators, which take it.
		pr.bar.SetCurrent(min(p.Elapsed.Milliseconds(), pr.total.Milliseconds()))
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.elapsed, pr.elapsedAt = p.Elapsed, time.Now()
	pr.status = pr.line(p)
	switch {
	case pr.off, pr.bar != nil:
	default:
		now := time.Now()
		if pr.last.IsZero() || now.Sub(pr.last) >= pr.every || p.Phase == results.PhaseStopping {
			fmt.Fprintf(pr.w, "[%s] %s\n", pr.clock(), pr.status)
			pr.last = now
		}
	}
}

// done ends the live bar so the summary prints below it (idempotent).
func (pr *progress) done() {
	if pr.bar != nil && !pr.ended {
		pr.ended = true
		pr.bar.SetCurrent(pr.total.Milliseconds())
		pr.p.Wait()
	}
}

func fmtMS(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.0f", v)
}
