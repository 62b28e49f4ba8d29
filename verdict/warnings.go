package verdict

import (
	"fmt"
	"math"
	"strings"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/results"
)

// Warnings: what a run's numbers show that makes its results say less
// than they seem to. Each has a stable id (its entry in
// docs/troubleshooting.md: cause and remedy), the numbers seen, the
// cause and the remedy.

// Warning ids. Every one has an entry in docs/troubleshooting.md (a test
// fails when one has none).
const (
	// WDropsCPU: over 1 % of arrivals dropped, the generator out of CPU.
	WDropsCPU = "W-DROPS-CPU"
	// WDropsSaturated: over 1 % dropped, the target saturated.
	WDropsSaturated = "W-DROPS-SATURATED"
	// WDropsVUCap: over 1 % dropped, every VU of max_vus busy.
	WDropsVUCap = "W-DROPS-VU-CAP"
	// WDropsVUSpawn: over 1 % dropped, VUs not added fast enough.
	WDropsVUSpawn = "W-DROPS-VU-SPAWN"
	// WGeneratorCPU: the generator used over 80 % of its cores.
	WGeneratorCPU = "W-GENERATOR-CPU"
	// WStartLag: more than StartLagShare of the ops started late enough
	// to change their response time (results.LateStartFraction).
	WStartLag = "W-START-LAG"
)

// WarningIDs lists every warning id Warnings can give.
var WarningIDs = []string{WDropsCPU, WDropsSaturated, WDropsVUCap, WDropsVUSpawn, WGeneratorCPU, WStartLag}

// Limits of the warnings.
const (
	// DropShare: drops over this share of the arrivals warn (0..1).
	DropShare = 0.01
	// BusyShare: a generator that used this share of its cores or more
	// may have been the bottleneck (0..1).
	BusyShare = 0.8
	// StartLagShare: late starts (results.OpSummary.LateStarts) over this
	// share of the completed ops warn (0..1).
	StartLagShare = 0.01
)

// Warnings judges s's numbers and returns its warnings, in the order a
// report prints them (drops first, then the generator, then start lag);
// nil when none. Start lag does not warn beside the generator's CPU or
// drops (their warning is its cause). It reads s only, so a summary read back from
// summary.json, or merged from segments, is judged on its own numbers: a
// merged run's start lag and drops on the merged counts (a segment's
// warning is never inherited as such), its generator's cores per segment
// (each is a process of its own).
func Warnings(s *results.Summary) []results.Warning {
	var out []results.Warning
	busy := generatorBusy(s)
	drops, dropped := dropWarning(s, busy != "")
	if dropped {
		out = append(out, drops)
	}
	if busy != "" {
		out = append(out, results.Warning{ID: WGeneratorCPU, Text: busy + ": the generator may be the bottleneck, and the results may understate the server",
			Cause:  "mcpbench needed about as much CPU as it had: ops waited for it to send and to read answers, which lengthens their response time and lowers the rate it can offer",
			Remedy: setting.Say("spread the load over more processes (%s N) or machines (k8s-job), give it more cores (%s, a bigger machine), or run the server elsewhere (%s) when it shares the machine", setting.Processes, setting.Procs, setting.URL)})
	} else if w, ok := startLagWarning(s); ok && !dropped { // drops over 1 %: their warning names why ops were late
		out = append(out, w)
	}
	return out
}

// generatorBusy names a generator that used BusyShare of its cores or
// more ("" none): the run's own, or each segment's of a merged run. The
// embedded server's CPU is counted with mcpbench's, so it does not count.
func generatorBusy(s *results.Summary) string {
	busy := func(g results.Generator) bool {
		procs := g.GOMAXPROCS
		if procs <= 0 {
			procs = g.NumCPU
		}
		return !g.IncludesServer && procs > 0 && g.Cores >= BusyShare*float64(procs)
	}
	if len(s.Segments) == 0 {
		g := s.Generator
		if !busy(g) {
			return ""
		}
		return fmt.Sprintf("mcpbench used %.2f of its %d cores", g.Cores, procsOf(g))
	}
	var parts []string
	for i, sg := range s.Segments {
		if busy(sg.Generator) {
			name := fmt.Sprintf("segment %d (%s)", i, sg.Dir)
			if sg.Segment != nil {
				name = "segment " + sg.Segment.Segment
			}
			parts = append(parts, fmt.Sprintf("%s used %.2f of its %d cores", name, sg.Generator.Cores, procsOf(sg.Generator)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "mcpbench's " + strings.Join(parts, ", ")
}

func procsOf(g results.Generator) int {
	if g.GOMAXPROCS > 0 {
		return g.GOMAXPROCS
	}
	return g.NumCPU
}

// dropWarning is the warning of an open-model run that dropped over
// DropShare of its arrivals, with its cause: the generator's CPU
// (genBusy), a saturated target (s.Saturation), the VU cap, or VUs not
// added fast enough.
func dropWarning(s *results.Summary, genBusy bool) (results.Warning, bool) {
	if s.Model != "open" || s.DroppedRate <= DropShare || s.Dropped == 0 {
		return results.Warning{}, false
	}
	arrivals := s.All.Count + s.Dropped + s.All.Interrupted
	text := fmt.Sprintf("dropped %d of %d arrivals (%.1f%%): they never started, and the latency table covers completed ops only (the table with the dropped ops gives their lower bounds)", s.Dropped, arrivals, 100*s.DroppedRate)
	svc := s.All.Service.Mean
	need := int(math.Ceil(s.TargetRate * svc / 1000))
	atCap := s.MaxVUs > 0 && s.VUs >= s.MaxVUs
	switch {
	case genBusy:
		return results.Warning{ID: WDropsCPU, Text: text,
			Cause:  fmt.Sprintf("the generator ran out of CPU (%.2f of its %d cores busy): arrivals waited for a core until they were too late", s.Generator.Cores, procsOf(s.Generator)),
			Remedy: setting.Say("run fewer VUs, more processes (%s N) or a bigger machine", setting.Processes)}, true
	case s.Saturation != "":
		vus := fmt.Sprintf("%d of max %d VUs were started, and more would only queue more work", s.VUs, s.MaxVUs)
		if atCap {
			vus = fmt.Sprintf("all %d VUs (max_vus) were waiting on it", s.MaxVUs)
		}
		return results.Warning{ID: WDropsSaturated, Text: text,
			Cause:  fmt.Sprintf("the target is saturated: %s; %s", s.Saturation, vus),
			Remedy: fmt.Sprintf("the server cannot serve %.4g ops/s: lower %s, or find the rate it sustains with mcpbench sweep --by rate", s.TargetRate, setting.Rate)}, true
	case atCap:
		return results.Warning{ID: WDropsVUCap, Text: text,
			Cause:  fmt.Sprintf("the VU cap: all %d VUs (max_vus) were busy; at the measured service time (mean %.1f ms) %.4g ops/s need about %d VUs in flight", s.MaxVUs, svc, s.TargetRate, need),
			Remedy: fmt.Sprintf("raise %s above %d: about %d are needed at the mean service time, more while it spikes", setting.MaxVUs, s.MaxVUs, need)}, true
	}
	want := max(need, s.VUs+1) // all of max_vus up front: the run needed more than it reached
	if s.MaxVUs > 0 {
		want = s.MaxVUs
	}
	return results.Warning{ID: WDropsVUSpawn, Text: text,
		Cause:  fmt.Sprintf("VUs could not be added fast enough (%d of max %d started; new sessions initialize in p99 %.1f ms)", s.VUs, s.MaxVUs, s.Sessions.Initialize.P99),
		Remedy: fmt.Sprintf("start them up front with %s %d (like k6's preAllocatedVUs), or give a longer %s so they are added before the measured window opens", setting.VUs, want, setting.Warmup)}, true
}

// startLagWarning is the warning of a run whose late starts (ops sent
// more than results.LateStartFraction of their response time, and more
// than results.LateStartFloor, after their intended start) are over
// StartLagShare of its completed ops: then the generator's lag, not the
// server, is a stated part of the response times. A lag that is small
// beside the response times does not warn, however long it is.
func startLagWarning(s *results.Summary) (results.Warning, bool) {
	n, of := s.All.LateStarts, s.All.Count
	if of == 0 || float64(n) <= StartLagShare*float64(of) {
		return results.Warning{}, false
	}
	g := s.Generator
	cause := g.LateWhy
	if cause == "" {
		cause = "mcpbench does not know why"
	}
	return results.Warning{ID: WStartLag,
		Text:  fmt.Sprintf("%d of %d ops (%.1f%%) started more than %.0f%% of their response time late (start lag p50 %.1f p99 %.1f max %.1f ms): their response times include the generator's delay", n, of, 100*float64(n)/float64(of), 100*results.LateStartFraction, g.StartLag.P50, g.StartLag.P99, g.StartLag.Max),
		Cause: cause,
		Remedy: setting.Say("when every VU was busy: more VUs up front (%s N); when mcpbench woke late: more cores (%s, %s N) or fewer other processes on the machine; "+
			"a lower %s measures the server without the lag; the service-time percentiles (from the actual send) exclude it", setting.VUs, setting.Procs, setting.Processes, setting.Rate)}, true
}
