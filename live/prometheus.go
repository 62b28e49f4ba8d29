package live

import (
	"cmp"
	"strings"
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/outcome"
	"github.com/mcpbench/mcpbench/results"
	"github.com/prometheus/client_golang/prometheus"
)

// GETStreamsOp is the op label of the GET streams' ledger counters.
const GETStreamsOp = "GET"

// Phases of mcpbench_run_phase: the interval phases and "done".
var phases = []string{string(results.PhaseWarmup), string(results.PhaseMeasure), string(results.PhaseStopping), "done"}

// opState is one op's counters over the process's life.
type opState struct {
	count, dropped, resumes float64
	classes                 [outcome.NumClasses]float64
	streams, faulty         float64
	verdicts                [outcome.NumVerdicts]float64
	resp, svc               *cumHist
	checks                  []checkState // the op's checks (checks_total)
}

// checkState is one check's counters.
type checkState struct {
	expr           string
	passed, failed float64
}

func newOpState() *opState { return &opState{resp: newCumHist(), svc: newCumHist()} }

// Prometheus is a results.Sink that keeps a run's counters and gauges
// and serves them as a prometheus.Collector. Counters accumulate over
// every run of the process (a sweep's steps, say), as Prometheus
// counters must. Safe for concurrent use: the engine's calls and a
// scrape's Collect share one lock, held for arithmetic and copies only.
type Prometheus struct {
	mu      sync.Mutex
	started time.Time
	ops     map[string]*opState
	order   []string // op names, first seen first
	info    []string // profile, target, protocol
	phase   string

	reconnects                                 float64
	vus, sessions, streams, inFlight, arrivals float64
	genCores, genRSS                           float64
	tgt                                        *results.ProcRow
	hasRun                                     bool
	closes                                     closes
}

var (
	_ results.Sink         = (*Prometheus)(nil)
	_ prometheus.Collector = (*Prometheus)(nil)
)

// NewPrometheus returns an empty sink; register it with a
// prometheus.Registry (Server does).
func NewPrometheus() *Prometheus {
	return &Prometheus{ops: map[string]*opState{}, started: time.Now()}
}

// op returns the state of op name (mu held), making it on first use.
func (p *Prometheus) op(name string) *opState {
	o, ok := p.ops[name]
	if !ok {
		o = newOpState()
		p.ops[name] = o
		p.order = append(p.order, name)
	}
	return o
}

// Start implements results.Sink: the run's description, and every op's
// series at zero, so rate() has a start.
func (p *Prometheus) Start(info *results.RunInfo) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.info = []string{info.Profile, secret.RedactURL(info.Target), cmp.Or(info.ProtocolNegotiated, "-")}
	p.hasRun = true
	p.phase = string(results.PhaseWarmup)
	p.closes.start(info.Started)
	for _, name := range info.Ops {
		p.op(name)
	}
}

// Interval implements results.Sink: the interval's counts added (by
// intended start, as intervals.csv), its histograms merged (by
// completion), the gauges set.
func (p *Prometheus) Interval(rec *results.IntervalRecord) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase = string(rec.Phase)
	row, iv := &rec.Row, &rec.Interval
	for i, name := range rec.Names {
		if i >= len(row.Ops) || i >= len(iv.Ops) {
			break
		}
		o, ro, st := p.op(name), row.Ops[i], iv.Ops[i]
		o.count += float64(ro.Count)
		o.dropped += float64(ro.Dropped)
		o.resumes += float64(ro.Resumes)
		for c := range ro.Classes {
			o.classes[c] += float64(ro.Classes[c])
		}
		if st != nil {
			o.streams += float64(st.Streams)
			o.faulty += float64(st.Faulty)
			for v := range st.Verdicts {
				o.verdicts[v] += float64(st.Verdicts[v])
			}
			o.resp.add(st.Response)
			o.svc.add(st.Service)
			o.addChecks(st.Checks)
		}
	}
	p.reconnects += float64(row.Reconnects)
	p.vus, p.sessions, p.streams = float64(rec.VUs), float64(rec.Sessions), float64(rec.Streams)
	p.arrivals = rec.TargetRate
	p.inFlight = inFlight(iv.All, p.closes.span())
	p.genCores, p.genRSS = row.Self.Cores, row.Self.RSSMB*(1<<20)
	if row.Target != nil {
		t := *row.Target
		p.tgt = &t
	}
}

// End implements results.Sink: the GET streams' ledger (judged when
// their sessions closed) and the phase "done".
func (p *Prometheus) End(end *results.RunEnd) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase = "done"
	p.inFlight = 0
	if end.Summary == nil {
		return
	}
	if g := end.Summary.GETStreams; g != nil && g.Ledger != nil {
		o := p.op(GETStreamsOp)
		o.streams += float64(g.Ledger.Streams)
		o.faulty += float64(g.Ledger.Faulty)
		for v := range outcome.NumVerdicts {
			o.verdicts[v] += float64(g.Ledger.Verdicts[v.String()])
		}
	}
}

// descs are the metrics' descriptions.
var descs = struct {
	ops, errors, dropped, duration, service, inFlight, arrival, vus, sessions, streams, checks,
	resumes, reconnects, ledger, faulty, verdicts, genCPU, genRSS, tgtCPU, tgtRSS, tgtFDs, tgtThreads, phase, info *prometheus.Desc
}{
	ops:        desc("ops_total", "Completed operations (errors included) of the measured window, counted by intended start.", "op"),
	errors:     desc("op_errors_total", "Failed operations by error class.", "op", "class"),
	dropped:    desc("ops_dropped_total", "Open model: arrivals no VU could start within the max delay.", "op"),
	duration:   desc("op_duration_seconds", "Response time from each operation's intended start (coordinated omission corrected).", "op"),
	service:    desc("op_service_duration_seconds", "Service time from the actual send.", "op"),
	inFlight:   desc("ops_in_flight", "Mean operations in flight over the last interval (completions × mean service time / interval).", ""),
	arrival:    desc("target_arrival_rate", "Open model: the arrival rate the schedule asks for, operations per second.", ""),
	vus:        desc("vus", "VUs running.", ""),
	sessions:   desc("sessions", "MCP sessions open.", ""),
	streams:    desc("get_streams", "Standalone GET streams open.", ""),
	resumes:    desc("resumes_total", "Resume attempts of broken response streams.", "op"),
	reconnects: desc("reconnects_total", "Reconnect attempts of response and GET streams.", ""),
	ledger:     desc("ledger_streams_total", "Streams the replay ledger judged (op=\"GET\": the GET streams, judged when their session closes).", "op"),
	faulty:     desc("ledger_faulty_streams_total", "Streams the replay ledger found faulty.", "op"),
	checks:     desc("checks_total", "Checks run on the operations' results, by check (its expression) and result (pass, fail), counted by completion.", "op", "check", "result"),
	verdicts:   desc("ledger_verdicts_total", "Replay-ledger verdicts (lost, duplicated, reordered, cross-stream, …).", "op", "verdict"),
	genCPU:     desc("generator_cpu_cores", "CPU mcpbench used over the last interval, in cores.", ""),
	genRSS:     desc("generator_resident_memory_bytes", "mcpbench's resident memory.", ""),
	tgtCPU:     desc("target_cpu_cores", "CPU the --target-pid process used over the last interval, in cores.", ""),
	tgtRSS:     desc("target_resident_memory_bytes", "Resident memory of the --target-pid process.", ""),
	tgtFDs:     desc("target_open_fds", "Open file descriptors of the --target-pid process.", ""),
	tgtThreads: desc("target_threads", "Threads of the --target-pid process.", ""),
	phase:      desc("run_phase", "1 for the phase the run is in.", "phase"),
	info:       desc("run_info", "The run: profile, target (credentials redacted), negotiated protocol.", "profile", "target", "protocol"),
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	var ls []string
	for _, l := range labels {
		if l != "" {
			ls = append(ls, l)
		}
	}
	d := prometheus.NewDesc("mcpbench_"+name, help, ls, nil)
	descNames[d] = "mcpbench_" + name
	return d
}

// descNames are the metrics' names by description (RemoteWrite's series
// names; client_golang keeps a Desc's name to itself).
var descNames = map[*prometheus.Desc]string{}

// Describe implements prometheus.Collector.
func (p *Prometheus) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descs.ops, descs.errors, descs.dropped, descs.duration, descs.service, descs.inFlight, descs.arrival,
		descs.vus, descs.sessions, descs.streams, descs.resumes, descs.reconnects, descs.ledger, descs.faulty, descs.verdicts, descs.checks,
		descs.genCPU, descs.genRSS, descs.tgtCPU, descs.tgtRSS, descs.tgtFDs, descs.tgtThreads, descs.phase, descs.info} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: the state as constant
// metrics, copied under the lock.
func (p *Prometheus) Collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	defer p.mu.Unlock()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, name := range p.order {
		p.collectOp(ch, name, p.ops[name], counter)
	}
	counter(descs.reconnects, p.reconnects)
	if !p.hasRun {
		return
	}
	gauge(descs.inFlight, p.inFlight)
	gauge(descs.arrival, p.arrivals)
	gauge(descs.vus, p.vus)
	gauge(descs.sessions, p.sessions)
	gauge(descs.streams, p.streams)
	gauge(descs.genCPU, p.genCores)
	gauge(descs.genRSS, p.genRSS)
	if t := p.tgt; t != nil {
		gauge(descs.tgtCPU, t.Cores)
		gauge(descs.tgtRSS, t.RSSMB*(1<<20))
		gauge(descs.tgtFDs, float64(t.FDs))
		gauge(descs.tgtThreads, float64(t.Threads))
	}
	for _, ph := range phases {
		v := 0.0
		if ph == p.phase {
			v = 1
		}
		gauge(descs.phase, v, ph)
	}
	gauge(descs.info, 1, p.info...)
}

// collectOp sends one op's series (mu held). The GET streams have only
// ledger counters.
func (p *Prometheus) collectOp(ch chan<- prometheus.Metric, name string, o *opState, counter func(*prometheus.Desc, float64, ...string)) {
	if name != GETStreamsOp {
		counter(descs.ops, o.count, name)
		counter(descs.dropped, o.dropped, name)
		counter(descs.resumes, o.resumes, name)
		for c := outcome.ClassOK + 1; c < outcome.NumClasses; c++ {
			counter(descs.errors, o.classes[c], name, c.String())
		}
		for _, c := range o.checks {
			counter(descs.checks, c.passed, name, c.expr, "pass")
			counter(descs.checks, c.failed, name, c.expr, "fail")
		}
		for _, h := range []struct {
			d *prometheus.Desc
			c *cumHist
		}{{descs.duration, o.resp}, {descs.service, o.svc}} {
			if m, err := h.c.metric(h.d, p.started, name); err == nil {
				ch <- m
			} else {
				ch <- prometheus.NewInvalidMetric(h.d, err)
			}
		}
	}
	counter(descs.ledger, o.streams, name)
	counter(descs.faulty, o.faulty, name)
	for v := range outcome.NumVerdicts {
		counter(descs.verdicts, o.verdicts[v], name, strings.ToLower(v.String()))
	}
}

// addChecks adds an interval's check tallies (mu held); an op's checks
// are the same in every interval, so they are matched by position and
// expression.
func (o *opState) addChecks(ts []results.CheckTally) {
	for i, t := range ts {
		if i >= len(o.checks) || o.checks[i].expr != t.Expr {
			o.checks = append(o.checks[:min(i, len(o.checks))], checkState{expr: t.Expr})
		}
		o.checks[i].passed += float64(t.Passed)
		o.checks[i].failed += float64(t.Failed)
	}
}
