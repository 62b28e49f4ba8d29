package verdict

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/outcome"
	"github.com/mcpbench/mcpbench/results"
)

// The metrics a threshold (--threshold) or a regression limit
// (compare --fail-if) can read: every number the summary prints, each read
// from exactly the field the text report prints it from.
//
// A metric may be scoped:
//
//	OP:metric        one op (an op name like tools/call:echo, or a method
//	                 like tools/call for every op of it)
//	post:metric      the response streams (every op's POST answer)
//	get:metric       the standalone GET streams
//	sessions:metric  sessions and the deleted-session checks
//
// and without a scope it reads the total: all ops, and for stream
// verdicts, resumes and reconnects the response and GET streams together
// (the session verdicts included).

// Scopes of a metric name.
const (
	ScopeTotal    = ""
	ScopePOST     = "post"
	ScopeGET      = "get"
	ScopeSessions = "sessions"
	scopeOp       = "op" // an op name or method
)

// view is what a metric reads: the summary, the op selected (nil for the
// stream and session scopes) and the quantile source for percentiles the
// summary does not keep.
type view struct {
	s     *results.Summary
	op    *results.OpSummary
	scope string
	q     QuantileSource
	check string // checks{CHECK}: the check selected ("" every one)
}

// QuantileSource gives any percentile of a recorded distribution, for
// thresholds like p(95) or p99.99 that the summary does not keep: op is an
// op name or "all", kind "response", "service", "ttfb" or "resume", q in
// (0, 100]. ok is false when there is no data. The engine answers from its
// histograms, report and compare from histograms.hlog.
type QuantileSource interface {
	Quantile(op, kind string, q float64) (ms float64, ok bool)
}

// metricDef is one thresholdable metric.
type metricDef struct {
	name   string
	unit   string   // "ms", "%", "ops/s", "s" or "" (a count)
	scopes []string // allowed scopes besides the total ("op", "post", "get", "sessions")
	doc    string
	read   func(v view) (float64, bool)
}

var metricDefs []metricDef

func def(name, unit, doc string, scopes []string, read func(v view) (float64, bool)) {
	metricDefs = append(metricDefs, metricDef{name: name, unit: unit, doc: doc, scopes: scopes, read: read})
}

var (
	opScopes      = []string{scopeOp}
	streamScopes  = []string{scopeOp, ScopePOST, ScopeGET}
	getScope      = []string{ScopeGET}
	sessionsScope = []string{ScopeSessions}
)

func cnt(n int64) (float64, bool) { return float64(n), true }

// opOf is the op a view reads: the selected op, or all of them.
func (v view) opOf() *results.OpSummary {
	if v.op != nil {
		return v.op
	}
	return &v.s.All
}

// The registry, in the order `mcpbench run --help` lists it.
func init() {
	defOps()
	defStreams()
	defSessions()
	defServerAndStorms()
}

// defOps registers the per-op counters and rates.
func defOps() {
	def("count", "", "completed ops (errors included)", opScopes, func(v view) (float64, bool) { return cnt(v.opOf().Count) })
	def("rate", "ops/s", "completed ops per second", opScopes, func(v view) (float64, bool) { return v.opOf().Rate, true })
	def("errors", "", "ops that failed", opScopes, func(v view) (float64, bool) { return cnt(v.opOf().Errors) })
	def("error_rate", "%", "errors / completed ops", opScopes, func(v view) (float64, bool) {
		o := v.opOf()
		return 100 * o.ErrorRate, o.Count > 0
	})
	def("dropped", "", "open model: arrivals that never started", opScopes, func(v view) (float64, bool) { return cnt(v.opOf().Dropped) })
	def("dropped_rate", "%", "dropped / arrivals (completed + dropped + interrupted)", opScopes, func(v view) (float64, bool) {
		o := v.opOf()
		n := o.Count + o.Dropped + o.Interrupted
		if n == 0 {
			return 0, false
		}
		return 100 * float64(o.Dropped) / float64(n), true
	})
	def("interrupted", "", "ops cut short by the end of the run", opScopes, func(v view) (float64, bool) { return cnt(v.opOf().Interrupted) })
	def("reinits", "", "sessions re-initialized after a 404", opScopes, func(v view) (float64, bool) { return cnt(v.opOf().Reinits) })
	def("reissues", "", "requests re-issued after a break with nothing to resume from", opScopes, func(v view) (float64, bool) { return cnt(v.opOf().Reissues) })
	def("throttled", "", "ops answered 429/503 with Retry-After", opScopes, func(v view) (float64, bool) { return cnt(v.opOf().Throttled) })
}

// defStreams registers resumes, GET-stream counters and the replay
// ledger's verdicts.
func defStreams() {
	def("resumes", "", "reconnect attempts of broken streams (GET: with Last-Event-ID)", streamScopes, func(v view) (float64, bool) {
		return v.streamSum(func(r *results.ResumeSummary) int64 { return r.Attempts }, false)
	})
	def("resumes_accepted", "", "resume attempts the server accepted", streamScopes, func(v view) (float64, bool) {
		return v.streamSum(func(r *results.ResumeSummary) int64 { return r.Accepted }, false)
	})
	def("early_reconnects", "", "reconnects made before the retry hint had passed (resumes and re-opens)", streamScopes, func(v view) (float64, bool) {
		return v.streamSum(func(r *results.ResumeSummary) int64 { return r.Early }, true)
	})
	def("reopens", "", "GET-stream re-open attempts without Last-Event-ID", getScope, func(v view) (float64, bool) {
		if g := v.s.GETStreams; g != nil && g.ReopenAttempts != nil {
			return cnt(g.ReopenAttempts.Attempts)
		}
		return 0, true
	})
	def("breaks", "", "GET-stream breaks", getScope, func(v view) (float64, bool) {
		if g := v.s.GETStreams; g != nil {
			return cnt(g.Breaks)
		}
		return 0, true
	})
	def("streams_failed", "", "GET streams that could not be opened", getScope, func(v view) (float64, bool) {
		if g := v.s.GETStreams; g != nil {
			return cnt(g.Failed)
		}
		return 0, true
	})
	def("faulty_streams", "", "streams with at least one replay verdict", streamScopes, func(v view) (float64, bool) {
		return v.ledgerSum(func(l *results.LedgerSummary) int64 { return l.Faulty })
	})
	for _, vd := range outcome.StreamVerdicts {
		name := vd.String()
		def(name, "", "replay-ledger verdict", streamScopes, func(v view) (float64, bool) {
			return v.ledgerSum(func(l *results.LedgerSummary) int64 { return l.Verdicts[name] })
		})
	}
}

// defSessions registers the deleted-session verdicts and session counters.
func defSessions() {
	for _, vd := range outcome.SessionVerdicts {
		name := vd.String()
		def(name, "", "deleted-session check verdict (sessions)", sessionsScope, func(v view) (float64, bool) {
			if h := v.s.Sessions.Hygiene; h != nil {
				return cnt(h.Verdicts[name])
			}
			return 0, true
		})
	}
	def("sessions_failed", "", "sessions that could not be initialized", sessionsScope, func(v view) (float64, bool) { return cnt(v.s.Sessions.Failed) })
	def("close_failures", "", "sessions whose DELETE failed", sessionsScope, func(v view) (float64, bool) { return cnt(v.s.Sessions.CloseFails) })
	def("bad_session_ids", "", "session ids outside visible ASCII", sessionsScope, func(v view) (float64, bool) { return cnt(v.s.Sessions.BadSessionIDs) })
}

// defServerAndStorms registers the reference server's double executions
// and the reconnect-storm metrics.
func defServerAndStorms() {
	def("double_executions", "", "count-tool keys the reference server executed more than once", nil, func(v view) (float64, bool) {
		if v.s.Server == nil {
			return 0, false
		}
		return cnt(v.s.Server.DoubleExecutions)
	})

	def("storm_reconnects", "", "reconnect attempts the storm waves' cuts caused (normal re-opens beside them left out)", nil, func(v view) (float64, bool) {
		var n int64
		for _, w := range v.s.Storms {
			n += w.Attempts
		}
		return cnt(n)
	})
	def("storm_recovery_s", "s", "longest recovery after a storm (-1: not recovered by the end)", nil, func(v view) (float64, bool) {
		if len(v.s.Storms) == 0 {
			return 0, false
		}
		worst := 0.0
		for _, w := range v.s.Storms {
			if w.RecoveryS < 0 {
				return -1, true
			}
			worst = max(worst, w.RecoveryS)
		}
		return worst, true
	})
}

// streamSum adds a resume count over the view's streams (reopens: GET
// re-opens too).
func (v view) streamSum(f func(*results.ResumeSummary) int64, reopens bool) (float64, bool) {
	var n int64
	if v.scope != ScopeGET {
		if r := v.opOf().Resumes; r != nil {
			n += f(r)
		}
	}
	if g := v.s.GETStreams; g != nil && (v.scope == ScopeTotal || v.scope == ScopeGET) {
		if g.Resumes != nil {
			n += f(g.Resumes)
		}
		if reopens && g.ReopenAttempts != nil {
			n += f(g.ReopenAttempts)
		}
	}
	return cnt(n)
}

// ledgerSum adds a ledger count over the view's streams.
func (v view) ledgerSum(f func(*results.LedgerSummary) int64) (float64, bool) {
	var n int64
	if v.scope != ScopeGET {
		if l := v.opOf().Ledger; l != nil {
			n += f(l)
		}
	}
	if g := v.s.GETStreams; g != nil && g.Ledger != nil && (v.scope == ScopeTotal || v.scope == ScopeGET) {
		n += f(g.Ledger)
	}
	return cnt(n)
}

// results.Latency metrics: [service_|ttfb_|resume_](pNN[.N] | p(NN[.N]) | max | mean).
var reLatency = regexp.MustCompile(`^(service_|ttfb_|resume_)?(max|mean|p([0-9]+(?:\.[0-9]+)?)|p\(([0-9]+(?:\.[0-9]+)?)\))$`)

// latency parses a latency metric: the kind, and the quantile (0: max or
// mean, with stat naming which).
func latency(name string) (kind, stat string, q float64, ok bool) {
	m := reLatency.FindStringSubmatch(name)
	if m == nil {
		return "", "", 0, false
	}
	kind = strings.TrimSuffix(m[1], "_")
	if kind == "" {
		kind = "response"
	}
	if m[2] == "max" || m[2] == "mean" {
		return kind, m[2], 0, true
	}
	qs := m[3] + m[4]
	q, err := strconv.ParseFloat(qs, 64)
	if err != nil || q <= 0 || q > 100 {
		return "", "", 0, false
	}
	return kind, "", q, true
}

// readLatency reads a latency metric off the view: from the summary for
// the percentiles it keeps, else from the quantile source.
func readLatency(v view, kind, stat string, q float64) (float64, bool) {
	o := v.opOf()
	var l *results.Latency
	switch kind {
	case "response":
		l = &o.Response
	case "service":
		l = &o.Service
	case "ttfb":
		l = &o.TTFB
	case "resume":
		if v.scope == ScopeGET {
			if g := v.s.GETStreams; g != nil && g.Resumes != nil {
				l = &g.Resumes.TimeToResume
			}
		} else if o.Resumes != nil {
			l = &o.Resumes.TimeToResume
		}
		if l == nil {
			return 0, false
		}
	}
	if kind != "resume" && o.Count == 0 {
		return 0, false
	}
	switch {
	case stat == "max":
		return l.Max, true
	case stat == "mean":
		return l.Mean, true
	case q == 50:
		return l.P50, true
	case q == 90:
		return l.P90, true
	case q == 99:
		return l.P99, true
	case q == 99.9:
		return l.P999, true
	}
	if v.q == nil || v.scope == ScopeGET {
		return 0, false
	}
	return v.q.Quantile(o.Name, kind, q)
}

// lookupMetric finds a metric by name (latency metrics parsed).
func lookupMetric(name string) (metricDef, bool) {
	if kind, stat, q, ok := latency(name); ok {
		scopes := opScopes
		if kind == "resume" {
			scopes = []string{scopeOp, ScopePOST, ScopeGET}
		}
		return metricDef{name: name, unit: "ms", scopes: scopes, read: func(v view) (float64, bool) { return readLatency(v, kind, stat, q) }}, true
	}
	for _, d := range metricDefs {
		if d.name == name {
			return d, true
		}
	}
	return metricDef{}, false
}

// MetricNames lists the metrics thresholds and --fail-if accept, with
// their unit, scopes and meaning, one per line (for --help, the README
// and error messages).
func MetricNames() []string {
	out := []string{
		"p50 p90 p99 p99.9 pNN[.N] p(NN[.N]) max mean   response time (ms; OP: scope)",
		"service_… ttfb_… resume_…                     service time, time to first byte, time to resume (ms)",
	}
	for _, d := range metricDefs {
		unit := d.unit
		if unit == "" {
			unit = "count"
		}
		var sc []string
		for _, s := range d.scopes {
			if s == scopeOp {
				s = "OP"
			}
			sc = append(sc, s+":")
		}
		scopes := ""
		if len(sc) > 0 {
			scopes = "; scopes " + strings.Join(sc, " ")
		}
		out = append(out, fmt.Sprintf("%-28s %s (%s%s)", d.name, d.doc, unit, scopes))
	}
	return out
}

// metricList is the short list of names for error messages.
func metricList() string {
	names := []string{"p50", "p90", "p99", "p99.9", "pNN[.N]", "p(NN)", "max", "mean", "service_*", "ttfb_*", "resume_*"}
	for _, d := range metricDefs {
		names = append(names, d.name)
	}
	return strings.Join(names, ", ")
}

// resolveScope splits "scope:metric" and checks the scope against the
// metric: post, get and sessions are stream/session scopes, anything else
// an op.
func resolveScope(d metricDef, scope string) (string, error) {
	switch scope {
	case "":
		return ScopeTotal, nil
	case ScopePOST, ScopeGET, ScopeSessions:
		if !slices.Contains(d.scopes, scope) {
			return "", fmt.Errorf("%s has no %s: scope (scopes: %s)", d.name, scope, scopeList(d))
		}
		return scope, nil
	}
	if !slices.Contains(d.scopes, scopeOp) {
		return "", fmt.Errorf("%s is not per op (scopes: %s)", d.name, scopeList(d))
	}
	return scopeOp, nil
}

func scopeList(d metricDef) string {
	if len(d.scopes) == 0 {
		return "none: total only"
	}
	var out []string
	for _, s := range d.scopes {
		if s == scopeOp {
			s = "OP"
		}
		out = append(out, s+":")
	}
	return strings.Join(out, " ")
}

// Read reads metric expr ("[scope:]metric") off a summary, the way
// thresholds do; for ops scoped by name or method it returns one value
// per op. q may be nil. It is for tests and tools that check a printed
// number against its threshold reading.
func Read(s *results.Summary, expr string, q QuantileSource) ([]float64, error) {
	expr, sel := cutCheckSelector(expr) // checks{CHECK} (metrics_checks.go)
	scope, name := splitScope(expr)
	d, ok := lookupMetric(name)
	if !ok {
		return nil, fmt.Errorf("unknown metric %q (valid: %s)", name, metricList())
	}
	sc, err := resolveScope(d, scope)
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, v := range views(s, sc, scope, q) {
		v.check = sel
		if x, ok := d.read(v); ok {
			out = append(out, x)
		} else {
			out = append(out, math.NaN())
		}
	}
	return out, nil
}

// splitScope splits at the last colon: "tools/call:echo:p99" is op
// "tools/call:echo", metric "p99".
func splitScope(expr string) (scope, name string) {
	if i := strings.LastIndexByte(expr, ':'); i >= 0 {
		return expr[:i], expr[i+1:]
	}
	return "", expr
}

// views returns what a scoped metric reads: the total, a stream/session
// scope, or every op matching an op name or method.
func views(s *results.Summary, sc, scope string, q QuantileSource) []view {
	if sc != scopeOp {
		return []view{{s: s, scope: sc, q: q}}
	}
	var out []view
	for i := range s.Ops {
		n := s.Ops[i].Name
		// An op, a method, or a scenario (its steps are "<scenario>#<n>:<op>").
		if n == scope || strings.HasPrefix(n, scope+":") || strings.HasPrefix(n, scope+"#") {
			out = append(out, view{s: s, op: &s.Ops[i], scope: scopeOp, q: q})
		}
	}
	return out
}

// Def describes one metric: its name, unit and scopes (besides the total:
// "OP", "post", "get", "sessions").
type Def struct {
	Name, Unit string
	Scopes     []string
}

// Defs lists the registered metrics (the latency family aside: pNN[.N],
// p(NN), max, mean, with service_, ttfb_, resume_).
func Defs() []Def {
	out := make([]Def, 0, len(metricDefs))
	for _, d := range metricDefs {
		var sc []string
		for _, s := range d.scopes {
			if s == scopeOp {
				s = "OP"
			}
			sc = append(sc, s)
		}
		out = append(out, Def{Name: d.name, Unit: d.unit, Scopes: sc})
	}
	return out
}
