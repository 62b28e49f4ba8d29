package plots

import (
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

// Op names of the fixture: one plain, one streaming with resumes, one
// with a long name and a space (its histogram tag has '_').
const (
	opEcho     = "tools/call:echo"
	opProgress = "tools/call:progress"
	opLong     = "resources/read:mcpbench://static/small item"
)

var fixtureStart = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// exponential records n values whose quantile function is base +
// scale·(−ln(1−u)) (µs), u at the middle of each of n equal slices: a
// deterministic latency distribution with a tail.
func exponential(n int, base, scale float64) *hdr.Histogram {
	h := results.NewHistogram()
	for i := range n {
		u := (float64(i) + 0.5) / float64(n)
		h.RecordValue(int64(base + scale*-math.Log(1-u)))
	}
	return h
}

// fixture returns a deterministic results directory as ReadResults
// would give it: an open-model run of 12 s (2 s warm-up, 9 s measured,
// a stopping interval) with errors, drops, resumes, a storm at 6 s,
// thresholds and ledger verdicts.
func fixture() *results.Results {
	ops := []string{opEcho, opProgress, opLong}
	res := &results.Results{
		Dir: "testdata/fixture",
		Run: &results.RunInfo{
			Tool: "mcpbench", Version: "v0.0.0-test", GoVersion: "go1.26", OS: "linux", Arch: "amd64", NumCPU: 2,
			Started: fixtureStart, Command: []string{"mcpbench", "run", "--rate", "100", "--out", "results/x y"},
			Target: "http://127.0.0.1:9/mcp", ProtocolRequested: "2025-11-25", ProtocolNegotiated: "2025-11-25",
			Profile: "golden", Flags: map[string]string{"rate": "100", "out": "results/x y"}, Seed: 7,
		},
		Ops:        ops,
		Histograms: map[string]*hdr.Histogram{},
		Series:     map[string][]*hdr.Histogram{},
	}
	res.Histograms[opEcho+".response"] = exponential(900, 800, 400)
	res.Histograms[opEcho+".service"] = exponential(900, 300, 150)
	res.Histograms[opProgress+".response"] = exponential(300, 100_000, 8_000)
	res.Histograms[opProgress+".service"] = exponential(300, 99_000, 7_000)
	res.Histograms[opProgress+".resume"] = exponential(240, 100_000, 1_500)
	res.Histograms[results.HlogTag(opLong)+".response"] = exponential(90, 1_200, 2_000)
	res.Histograms[results.HlogTag(opLong)+".service"] = exponential(90, 500, 600)

	for i := 1; i <= 12; i++ {
		phase := results.PhaseMeasure
		switch {
		case i <= 2:
			phase = results.PhaseWarmup
		case i == 12:
			phase = results.PhaseStopping
		}
		k := float64(i % 4)
		iv := results.IntervalRec{
			T: float64(i) + 0.001, Interval: 1, Phase: phase, TargetRate: 100,
			VUs: 8, Sessions: 8, ErrorsByClass: map[string]int64{}, Ops: map[string]results.IntervalOpRec{},
		}
		if phase == "stopping" {
			iv.TargetRate = 0
		}
		echo := results.IntervalOpRec{Count: 60 + int64(i%3), P50: 1.05 + k/10, P90: 1.6 + k/8, P99: 2.3 + k/4, Max: 3 + k}
		prog := results.IntervalOpRec{Count: 20, P50: 101 + k/2, P90: 104 + k, P99: 112 + k, Max: 120 + 2*k, Resumes: 16 + int64(i%2)}
		long := results.IntervalOpRec{Count: 10, P50: 2.5 + k/5, P90: 5 + k/2, P99: 8 + k, Max: 9 + k}
		if i == 5 { // an interval where nothing of this op completed: a gap
			long = results.IntervalOpRec{}
		}
		if i == 6 || i == 7 { // the storm: errors and slow responses
			echo.Errors, echo.P99, echo.Max = 4, 40, 95
			prog.Errors = 2
			iv.ErrorsByClass[driver.ClassTransport.String()] = 5
			iv.ErrorsByClass[driver.ClassTimeout.String()] = 1
			iv.Reconnects = 45
			iv.Dropped = 7
		}
		iv.Reconnects += prog.Resumes
		iv.Ops[opEcho], iv.Ops[opProgress], iv.Ops[opLong] = echo, prog, long
		iv.All = results.IntervalOpRec{
			Count: echo.Count + prog.Count + long.Count, Errors: echo.Errors + prog.Errors,
			Resumes: prog.Resumes, P50: echo.P50 + 0.2, P90: prog.P50, P99: prog.P99, Max: prog.Max,
		}
		if i == 6 || i == 7 {
			iv.All.P99, iv.All.Max = 140, 180
		}
		iv.Rate = float64(iv.All.Count)
		iv.Self = results.ProcRow{Cores: 0.12 + k/50, RSSMB: 58 + float64(i)/2}
		iv.Target = &results.ProcRow{Cores: 0.4 + k/10, RSSMB: 80 + 1.5*float64(i), FDs: 30 + i%3, Threads: 12}
		if i <= 2 {
			iv.Sessions = int64(4 * i) // sessions opening in the warm-up
		} else {
			iv.Sessions = 8
		}
		iv.Streams = iv.Sessions
		res.Intervals = append(res.Intervals, iv)
	}

	verdicts := func(kv map[string]int64) map[string]int64 {
		m := map[string]int64{}
		for _, v := range driver.Verdicts() {
			m[v.String()] = kv[v.String()]
		}
		return m
	}
	lat := results.LatencyOf
	res.Summary = &results.Summary{
		Tool: "mcpbench v0.0.0-test", Target: "http://127.0.0.1:9/mcp", Protocol: "2025-11-25", Profile: "golden",
		Model: "open", Started: fixtureStart, DurationS: 9, WarmupS: 2, TargetRate: 100, Rate: 92.3, VUs: 8, MaxVUs: 16, Dropped: 14,
		Ops: []results.OpSummary{
			{Name: opEcho, Count: 549, Rate: 61, Errors: 8, ErrorRate: 8.0 / 549,
				ErrorsByClass: map[string]int64{"transport": 6, "timeout": 2},
				ErrorExamples: map[string]string{"transport": `read tcp: connection reset <script>alert("x")</script>`, "timeout": "context deadline exceeded"},
				Response:      lat(res.Histograms[opEcho+".response"]), Service: lat(res.Histograms[opEcho+".service"])},
			{Name: opProgress, Count: 180, Rate: 20, Errors: 4, ErrorRate: 4.0 / 180, ErrorsByClass: map[string]int64{"transport": 4},
				Response: lat(res.Histograms[opProgress+".response"]), Service: lat(res.Histograms[opProgress+".service"]),
				Resumes: &results.ResumeSummary{Attempts: 150, Accepted: 148, Early: 1,
					TimeToResume: lat(res.Histograms[opProgress+".resume"]), Wait: results.Latency{P50: 100.2, P90: 100.9, P99: 101.5, Max: 103}},
				Ledger: &results.LedgerSummary{Streams: 180, Faulty: 3, Verdicts: verdicts(map[string]int64{"lost": 2, "duplicated": 1})}},
			{Name: opLong, Count: 80, Rate: 8.9, Response: lat(res.Histograms[results.HlogTag(opLong)+".response"]), Service: lat(res.Histograms[results.HlogTag(opLong)+".service"])},
		},
		Thresholds: []results.ThresholdResult{
			{Expr: "tools/call:echo:p99<50ms", Actual: 41.2, Limit: 50, Unit: "ms", Pass: true},
			{Expr: "errors<1%", Actual: 1.48, Limit: 1, Unit: "%", Pass: false},
		},
		Storms: []results.Wave{{AtS: 6, Attempts: 90, Early: 3, PeakPerSec: 410, FirstMS: 10, P50MS: 100, P95MS: 180, LastMS: 240,
			SpreadMS: 180, Errors: 12, PeakP99MS: 140, RecoveryS: 2.1, BaseP99MS: 113, BaseErrors: 0}},
		Chaos: &results.ChaosSummary{Seed: 7, CutsRST: 120, CutsFIN: 30, StormCuts: 40},
		Sessions: results.SessionSummary{Opened: 9, Failed: 1, Closed: 9, Initialize: results.Latency{P50: 3.1, P90: 3.4, P99: 3.9, Max: 4.2},
			FailClasses: map[string]int64{"http-status": 1}, FailExamples: map[string]string{"http-status": "HTTP status 503"},
			Hygiene: &results.HygieneSummary{Probed: 9, Verdicts: verdicts(nil)}},
		GETStreams: &results.GETStreamSummary{Opened: 8, Events: 96, Breaks: 8, Reopens: 8,
			Ledger: &results.LedgerSummary{Streams: 8, Verdicts: verdicts(nil)}},
		Generator: results.Generator{CPUSeconds: 1.25, CPUPerOpUS: 151.2, Cores: 0.14, MaxRSSMB: 61, NumCPU: 2,
			StartLag: results.Latency{P50: 0.2, P99: 0.9, Max: 2.5}, IncludesServer: false},
	}
	all := results.OpSummary{Name: "all"}
	for _, o := range res.Summary.Ops {
		all.Count += o.Count
		all.Errors += o.Errors
		all.Rate += o.Rate
	}
	all.ErrorRate = float64(all.Errors) / float64(all.Count)
	all.ErrorsByClass = map[string]int64{"transport": 10, "timeout": 2}
	all.Response, all.Service = res.Summary.Ops[1].Response, res.Summary.Ops[1].Service
	res.Summary.All = all
	res.Offenders = &results.OffendersFile{Faulty: 3, First: []results.Offender{{Op: opProgress}}}
	return res
}

// closedNoResumes is a closed-model run of 5 s without resumes, errors or
// summary.json (a crash): its summary is rebuilt.
func closedNoResumes() *results.Results {
	res := &results.Results{
		Dir:        "testdata/crashed",
		Run:        &results.RunInfo{Tool: "mcpbench", Version: "v0.0.0-test", Started: fixtureStart, Target: "http://127.0.0.1:9/mcp", Embedded: true, Profile: "smoke"},
		Ops:        []string{opEcho},
		Histograms: map[string]*hdr.Histogram{opEcho + ".response": exponential(500, 500, 100), opEcho + ".service": exponential(500, 500, 100)},
		Series:     map[string][]*hdr.Histogram{},
	}
	for i := 1; i <= 5; i++ {
		o := results.IntervalOpRec{Count: 100, P50: 0.55, P90: 0.7, P99: 0.9, Max: 1.1}
		res.Intervals = append(res.Intervals, results.IntervalRec{T: float64(i), Interval: 1, Phase: results.PhaseMeasure, Rate: 100, All: o,
			Ops: map[string]results.IntervalOpRec{opEcho: o}, ErrorsByClass: map[string]int64{}})
	}
	return res
}
