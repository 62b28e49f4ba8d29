package results

import (
	"encoding/json"
	"strconv"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/outcome"
)

// Summary is the outcome of a run: summary.json, and what the text report
// prints. Times are milliseconds (suffix _ms) or seconds (suffix _s);
// rates are per second.
type Summary struct {
	Tool        string    `json:"tool"`
	Target      string    `json:"target"`
	Embedded    bool      `json:"embedded_server"`
	Protocol    string    `json:"protocol"`
	ProtocolWhy string    `json:"protocol_why,omitempty"` // with --protocol auto: how it was decided
	Notes       []string  `json:"notes,omitempty"`        // what the run changed or noticed
	Profile     string    `json:"profile"`
	Model       string    `json:"model"` // "open" (arrival rate) or "closed" (VUs)
	Started     time.Time `json:"started"`
	DurationS   float64   `json:"duration_s"` // measured window actually run (warm-up excluded)
	WarmupS     float64   `json:"warmup_s"`
	TargetRate  float64   `json:"target_rate,omitempty"` // open model: the arrival rate asked for (with stages, its mean over the window)
	// Stages is the ramp the load followed, e.g. "0 → 500/s over 10s → 2000/s
	// over 10s" ("" without stages).
	Stages string  `json:"stages,omitempty"`
	Rate   float64 `json:"rate"` // completed ops per second (errors included)
	VUs    int     `json:"vus"`  // VUs started (pre-allocated and added)
	MaxVUs int     `json:"max_vus"`
	// Concurrency is the requests each VU's session had in flight at once
	// (0 or 1: one at a time).
	Concurrency int   `json:"concurrency,omitempty"`
	Dropped     int64 `json:"dropped"` // open model: ops not started (no free VU, queue full)
	// DroppedRate is dropped / arrivals (completed + dropped + interrupted),
	// 0..1.
	DroppedRate float64 `json:"dropped_rate"`
	// InFlight is the mean requests in flight per session measured: the
	// time the measured ops were in flight (sent until answered) over the
	// window × the VUs (each VU owns a session). Compare with Concurrency:
	// a lane that waits for something after its answer, or a generator
	// too slow to send the next request, shows as less.
	InFlight float64 `json:"in_flight_mean,omitempty"`
	// DropWarning says, when more than 1 % of arrivals were dropped, how
	// many and why (the cause the numbers show); "" otherwise.
	DropWarning string `json:"drop_warning,omitempty"`
	// Saturation is what the engine saw of the target's service time when
	// it climbed during the run or rose with load ("" when neither): the
	// sign of a saturated target that verdict.Warnings names as the cause
	// of drops.
	Saturation string `json:"saturation,omitempty"`
	// Warnings are the warnings the numbers call for (verdict.Warnings),
	// each with its stable id, cause and remedy (docs/troubleshooting.md);
	// nil when none. Reports recompute them from the summary, so a merged
	// run's are judged on the merged numbers.
	Warnings    []Warning `json:"warnings,omitempty"`
	Interrupted bool      `json:"interrupted"`
	StopReason  string    `json:"stop_reason,omitempty"`
	// Aborted: a threshold of abort_on_fail was crossed during the run,
	// which stopped there (StopReason says when and why); the run fails
	// its thresholds (exit 99).
	Aborted bool `json:"aborted,omitempty"`

	Ops []OpSummary `json:"ops"`
	All OpSummary   `json:"all"`
	// Scenarios are the iterations of each scenario (nil without); their
	// steps' requests are rows of Ops.
	Scenarios []ScenarioSummary `json:"scenarios,omitempty"`
	// Endpoints are the results per endpoint when the run spread its
	// sessions over several (nil with one).
	Endpoints []EndpointSummary `json:"endpoints,omitempty"`

	// NotApplicable are the requested features the run could not apply
	// (nil when every one applied).
	NotApplicable []NotApplicable `json:"not_applicable,omitempty"`
	// Soak is, on a soak's summary, what its verdicts judged (set by the
	// soak after the run, before the report: the run's one verdict line
	// counts a failed soak verdict, or none judged); nil for a run.
	Soak *SoakOutcome `json:"soak,omitempty"`

	Sessions   SessionSummary    `json:"sessions"`
	GETStreams *GETStreamSummary `json:"get_streams,omitempty"`
	Generator  Generator         `json:"generator"`

	// Net describes the connections: HTTP version, proxy, TLS
	// handshakes, OAuth token fetches (nil when the client was not built
	// by the driver).
	Net *NetSummary `json:"net,omitempty"`
	// Chaos is what the fault plan injected (nil without chaos).
	Chaos *ChaosSummary `json:"chaos,omitempty"`
	// Storms analyses each storm wave.
	Storms []Wave `json:"storms,omitempty"`
	// TargetProc is the target process sampled with --target-pid.
	TargetProc *TargetSummary `json:"target_process,omitempty"`
	// Server holds the embedded reference server's own counters.
	Server *ServerStats `json:"server,omitempty"`
	// Subscriptions describes resource subscriptions and the latency of
	// their updates (nil when none).
	Subscriptions *SubscriptionSummary `json:"subscriptions,omitempty"`
	// Thresholds are the pass/fail criteria checked at the end (k6 style:
	// any failure makes the run exit 99).
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// Segment is the execution segment this run was (nil: the whole test).
	Segment *SegmentInfo `json:"segment,omitempty"`
	// Segments are the segments a merged run was made of, each with its
	// own generator cost (nil for a run).
	Segments []SegmentResult `json:"segments,omitempty"`
}

// Warning is one thing a run's numbers show that makes its results say
// less than they seem to (no threshold): ID is stable (W-START-LAG …: the
// entry of docs/troubleshooting.md), Text what was seen with its
// numbers, Cause why, Remedy what to do about it.
type Warning struct {
	ID     string `json:"id"`
	Text   string `json:"text"`
	Cause  string `json:"cause"`
	Remedy string `json:"remedy"`
}

// A completed op counts as a late start (OpSummary.LateStarts) when it
// was sent more than LateStartFloor after its intended start and its
// start lag is more than LateStartFraction of its response time: then
// the lag, not the server, is a stated part of what was measured. Below
// the floor, timer granularity and scheduling noise are not told apart.
const (
	LateStartFraction = 0.1
	LateStartFloor    = time.Millisecond
)

// ThresholdResult is one threshold checked against the run.
type ThresholdResult struct {
	Expr   string  `json:"expr"`   // as written, e.g. "tools/call:p99<200ms"
	Actual float64 `json:"actual"` // the measured value, in Unit
	Limit  float64 `json:"limit"`  // the bound, in Unit
	Unit   string  `json:"unit"`   // "ms", "%", "ops/s" or "" (a count)
	Pass   bool    `json:"pass"`
}

// ServerStats are the embedded reference server's counters: tool
// executions, and keys of its count tool that ran more than once (a
// re-issued request the server executed twice).
type ServerStats struct {
	ToolCalls        int64 `json:"tool_calls"`
	DoubleExecutions int64 `json:"double_executions"`
	CountKeys        int64 `json:"count_keys"`
	// Cancels counts the notifications/cancelled that named a tool call in
	// flight; Muted the writes of cancelled calls the server kept from the
	// client.
	Cancels int64 `json:"cancels_received,omitempty"`
	Muted   int64 `json:"muted_after_cancel,omitempty"`
}

// ChaosSummary describes the faults injected in the measured window
// (warm-up and set-up apart).
type ChaosSummary struct {
	// Plan is the faults and storm as run (defaults filled): the JSON of
	// a chaos.Plan, kept as written (metrics stores it, never reads it).
	Plan json.RawMessage `json:"plan"`
	// Seed drove the schedule: --chaos-seed with it reproduces the run.
	Seed      int64 `json:"seed"`
	CutsFIN   int64 `json:"cuts_fin"`
	CutsRST   int64 `json:"cuts_rst"`
	Stalls    int64 `json:"stalls"`
	Delays    int64 `json:"delays"`
	StormCuts int64 `json:"storm_cuts"`
	// StreamResets and ConnCloses split the cuts of response streams
	// (faults and storms) by what they broke: one HTTP/2 stream
	// (RST_STREAM; its connection and the session's other streams kept:
	// layer stream), or a connection with every stream on it (layer conn;
	// over HTTP/1.1, every cut). A random-time cut that fires before the
	// answer cancels its request and is in neither.
	StreamResets int64 `json:"stream_resets,omitempty"`
	ConnCloses   int64 `json:"conn_closes,omitempty"`
	// Outside counts the faults injected outside the measured window
	// (warm-up, set-up with target=init, the graceful stop).
	Outside int64 `json:"outside_window,omitempty"`
}

// Latency holds percentiles in milliseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// OpSummary is one op's totals.
type OpSummary struct {
	Name          string           `json:"name"`
	Count         int64            `json:"count"`
	Rate          float64          `json:"rate"`
	Errors        int64            `json:"errors"`
	ErrorRate     float64          `json:"error_rate"` // errors / count, 0..1
	ErrorsByClass map[string]int64 `json:"errors_by_class,omitempty"`
	// ErrorExamples is one error message per class (the first seen).
	ErrorExamples map[string]string `json:"error_examples,omitempty"`
	Status        map[string]int64  `json:"status,omitempty"` // by HTTP status; "0" = no response
	Dropped       int64             `json:"dropped,omitempty"`
	Interrupted   int64             `json:"interrupted,omitempty"`
	// LateStarts counts the completed ops that started late enough to
	// change their response time: start lag over LateStartFloor and over
	// LateStartFraction of the op's response time.
	LateStarts int64 `json:"late_starts,omitempty"`
	// Throttled counts ops answered 429/503 with a Retry-After that the VU
	// waited before its next op; ThrottleWaitS is the total wait.
	Throttled     int64   `json:"throttled,omitempty"`
	ThrottleWaitS float64 `json:"throttle_wait_s,omitempty"`
	Response      Latency `json:"response_time_ms"` // completed ops, from the intended start (coordinated omission corrected)
	// WithDropped is response time over completed and dropped ops, each
	// dropped op at its lower bound (see DroppedLB); nil without drops.
	// A value of it at or above CensoredFromMS rests on a dropped op's
	// bound, so it is itself only a lower bound of the truth (Max and Mean
	// always are, with drops).
	WithDropped *Latency `json:"response_time_with_dropped_ms,omitempty"`
	// Offered counts the ops WithDropped covers, completed and dropped, and
	// OfferedRate is their rate over the window (ops/s); 0 without drops.
	Offered     int64   `json:"offered,omitempty"`
	OfferedRate float64 `json:"offered_rate,omitempty"`
	// CensoredFromMS is the smallest dropped op's lower bound (ms, HDR
	// bucket floor): the true response time of a dropped op is only known
	// to be at least its bound (it never ran).
	CensoredFromMS float64 `json:"censored_from_ms,omitempty"`
	// DroppedLB is the dropped ops' response time lower bound: how late
	// each was when a VU found it too late to send.
	DroppedLB *Latency `json:"dropped_lower_bound_ms,omitempty"`
	Service   Latency  `json:"service_time_ms"` // from the actual send
	TTFB      Latency  `json:"ttfb_ms"`
	BytesIn   int64    `json:"bytes_in"`
	BytesOut  int64    `json:"bytes_out"`
	Events    int64    `json:"sse_events"`
	Progress  int64    `json:"progress_notifications"`
	Reinits   int64    `json:"reinits,omitempty"`
	Reissues  int64    `json:"reissues,omitempty"`
	// ReissuedOK counts ops that completed after at least one re-issue.
	ReissuedOK int64 `json:"completed_after_reissue,omitempty"`
	// WastedMS is the time spent on attempts that broke and were re-issued.
	WastedMS    float64        `json:"wasted_ms,omitempty"`
	InputRounds int64          `json:"input_rounds,omitempty"`
	Resumes     *ResumeSummary `json:"resumes,omitempty"`
	Ledger      *LedgerSummary `json:"ledger,omitempty"`
	MCPSummary                 // pages, cancelled calls, notifications (mcp.go)
	// Checks are the op's checks (checks.go): passed, failed, pass rate
	// and the first failure; in the "all" row, each check expression over
	// every op that has it.
	Checks []CheckSummary `json:"checks,omitempty"`
}

// ResumeSummary describes resumes of broken response streams.
type ResumeSummary struct {
	Attempts     int64   `json:"attempts"`
	Accepted     int64   `json:"accepted"`
	Early        int64   `json:"early"` // made before the retry hint had passed
	TimeToResume Latency `json:"time_to_resume_ms"`
	Wait         Latency `json:"reconnect_delay_ms"` // from the break to the reconnect attempt
	// ViaLink counts the attempts sent to the stream's rel="stream" URL
	// (SEP-1335) instead of the MCP endpoint.
	ViaLink int64 `json:"via_stream_link,omitempty"`
	// RetryCapped counts the reconnect waits whose server retry hint was
	// over the cap (driver.DefaultMaxRetryWait, 30 s) and were cut to it;
	// RetryHintMaxMS is the largest such hint and RetryCapMS the cap.
	RetryCapped    int64 `json:"retry_hint_capped,omitempty"`
	RetryHintMaxMS int64 `json:"retry_hint_max_ms,omitempty"`
	RetryCapMS     int64 `json:"retry_cap_ms,omitempty"`
	// Limited counts the streams given up at the reconnect bounds
	// (class resume-limit; driver.DefaultMaxStreamResumes attempts on one
	// response stream, driver.DefaultMaxResumeRate in one second).
	Limited int64 `json:"resume_limit_hit,omitempty"`
}

// setCap sets the retry cap counts of r from c.
func (r *ResumeSummary) setCap(c outcome.RetryCap) {
	r.RetryCapped, r.RetryHintMaxMS, r.RetryCapMS = c.N, c.HintMaxMS, c.Cap.Milliseconds()
}

// LedgerSummary is the replay ledger's verdict totals.
type LedgerSummary struct {
	Streams  int64            `json:"streams"`
	Faulty   int64            `json:"faulty_streams"`
	Verdicts map[string]int64 `json:"verdicts"` // every verdict, zeros included
	// ViaLink counts the streams resumed through their rel="stream" URL
	// (SEP-1335); LinksRefused the links refused for naming another origin
	// (never followed).
	ViaLink      int64 `json:"resumed_via_stream_link,omitempty"`
	LinksRefused int64 `json:"stream_links_refused,omitempty"`
}

// SessionSummary describes session set-up and teardown.
type SessionSummary struct {
	Opened     int64   `json:"opened"`
	Failed     int64   `json:"failed"`
	Closed     int64   `json:"closed"`
	CloseFails int64   `json:"close_failures"`
	Initialize Latency `json:"initialize_ms"`
	// FailClasses counts failed initializations by error class.
	FailClasses map[string]int64 `json:"fail_classes,omitempty"`
	// FailExamples is one error message per class (the first seen).
	FailExamples map[string]string `json:"fail_examples,omitempty"`
	// Churned counts sessions closed and replaced during the run (churn).
	Churned int64 `json:"churned,omitempty"`
	// Hygiene is the verdict of the deleted-session checks (a deleted
	// session must answer 404); nil when none was made.
	Hygiene *HygieneSummary `json:"hygiene,omitempty"`
	// BadSessionIDs counts session ids with characters outside visible
	// ASCII (2025-11-25 transports: the session ID MUST only contain
	// visible ASCII characters).
	BadSessionIDs int64 `json:"bad_session_ids,omitempty"`
	// Redirects counts 307/308 answers followed (--follow-redirects).
	Redirects int64 `json:"redirects_followed,omitempty"`
}

// HygieneSummary is the verdict of the deleted-session checks: each
// deleted session is probed once and must answer 404.
type HygieneSummary struct {
	Probed int64 `json:"probed"` // sessions probed after DELETE
	Faulty int64 `json:"faulty"` // sessions that did not answer 404
	// Verdicts counts faulty sessions by verdict (deleted-session-accepted:
	// 2xx; wrong-missing-session-status: another status).
	Verdicts map[string]int64 `json:"verdicts"`
	// Statuses counts the HTTP statuses the faulty sessions answered.
	Statuses map[string]int64 `json:"statuses,omitempty"`
}

// GETStreamSummary describes standalone GET streams.
type GETStreamSummary struct {
	Opened   int64 `json:"opened"`
	None     int64 `json:"none_offered"` // 405
	Failed   int64 `json:"failed"`
	Events   int64 `json:"events"`
	Requests int64 `json:"server_requests_answered"`
	Breaks   int64 `json:"breaks"`
	// BreakCauses counts breaks by cause: "ended" (the server ended the
	// stream) or the error class of the read that failed.
	BreakCauses map[string]int64 `json:"break_causes,omitempty"`
	Reopens     int64            `json:"reopens"` // re-opens without Last-Event-ID that the server accepted
	// Resumes are the reconnects with Last-Event-ID (the server can replay
	// what was sent meanwhile); ReopenAttempts those without (a stream
	// that carried no event id: what was sent meanwhile is lost unless the
	// server keeps it).
	Resumes        *ResumeSummary `json:"resumes,omitempty"`
	ReopenAttempts *ResumeSummary `json:"reopen_attempts,omitempty"`
	Ledger         *LedgerSummary `json:"ledger,omitempty"`
	// Notifications counts the notifications the GET streams carried.
	Notifications *NotificationSummary `json:"notifications,omitempty"`
	// FailExample is the message of a failed open or reconnect.
	FailExample string `json:"fail_example,omitempty"`
}

// Generator is mcpbench's own cost over the measured window, from
// getrusage(2): if CPUPerOpUS is high or Cores near the machine's core
// count, the generator may be the bottleneck.
type Generator struct {
	CPUSeconds float64 `json:"cpu_s"`
	CPUPerOpUS float64 `json:"cpu_us_per_op"`
	Cores      float64 `json:"cores_used"`
	MaxRSSMB   float64 `json:"max_rss_mb"`
	// SettledRSSMB is the process's RSS near the end of the measured
	// window, read after forced GCs returned freed memory to the OS, with
	// SettledSessions sessions open (workload.Options.SettleMemory; 0
	// when not asked): what the sessions hold, not the GC's headroom.
	SettledRSSMB    float64 `json:"settled_rss_mb,omitempty"`
	SettledSessions int64   `json:"settled_sessions,omitempty"`
	// Bottleneck warns when mcpbench itself may limit the run ("" if not).
	Bottleneck string `json:"bottleneck_warning,omitempty"`
	// StartLag is how late ops were sent after their intended start (ms):
	// timer granularity, goroutine scheduling, waiting for a free VU. It is
	// part of response time and not of service time.
	StartLag Latency `json:"start_lag_ms"`
	// LateWhy says what made the ops that started more than 10 ms late
	// late (every VU busy on the target, the generator waking late,
	// session churn); "" when the engine did not say.
	LateWhy string `json:"late_why,omitempty"`
	// Budget is the large-message memory budget's use: its size (MB), its
	// peak (MB reserved at once: the buffers of the large messages being
	// read, which max RSS exceeds by the small buffers and by dropped
	// buffers the Go collector has not yet reclaimed) and the reads that
	// waited for it (their wait is in their latency).
	BudgetMB       float64 `json:"large_message_budget_mb,omitempty"`
	BudgetPeakMB   float64 `json:"large_message_budget_peak_mb,omitempty"`
	BudgetWaits    int64   `json:"large_message_budget_waits,omitempty"`
	NumCPU         int     `json:"num_cpu"`
	GOMAXPROCS     int     `json:"gomaxprocs"` // Ps running mcpbench's Go code (--procs)
	IncludesServer bool    `json:"includes_embedded_server"`
}

// Quantiles is what LatencyOf reads of a histogram (µs): *hdr.Histogram
// and *Hist both are one.
type Quantiles interface {
	TotalCount() int64
	ValueAtQuantile(q float64) int64
	Max() int64
	Mean() float64
}

// LatencyOf returns h's percentiles in ms (µs histogram). h may be nil, a
// nil *hdr.Histogram or a nil *Hist (zero Latency).
func LatencyOf(h Quantiles) Latency {
	switch x := h.(type) {
	case nil:
		return Latency{}
	case *hdr.Histogram:
		if x == nil {
			return Latency{}
		}
	}
	if h.TotalCount() == 0 { // (a nil *Hist counts 0)
		return Latency{}
	}
	ms := func(v int64) float64 { return textfmt.Round3(float64(v) / 1000) }
	return Latency{
		P50:  ms(h.ValueAtQuantile(50)),
		P90:  ms(h.ValueAtQuantile(90)),
		P99:  ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)),
		Max:  ms(h.Max()),
		Mean: textfmt.Round3(h.Mean() / 1000),
	}
}

// addDropped sets the latency over completed and dropped ops from the
// completed ops' response times and the dropped ops' lower bounds (µs),
// with the count, rate (over secs) and the bound its values rest on from
// CensoredFromMS up; nothing without drops.
func (s *OpSummary) addDropped(response, dropped *Hist, secs float64) {
	if dropped == nil || dropped.TotalCount() == 0 {
		return
	}
	lb := LatencyOf(dropped)
	s.DroppedLB = &lb
	h := NewHist()
	h.Merge(response)
	h.Merge(dropped)
	wd := LatencyOf(h)
	s.WithDropped = &wd
	s.Offered = h.TotalCount()
	s.CensoredFromMS = textfmt.Round3(float64(dropped.Min()) / 1000)
	if secs > 0 {
		s.OfferedRate = textfmt.Round3(float64(s.Offered) / secs)
	}
}

// OpSummaryOf summarizes stats over a window of secs seconds.
func OpSummaryOf(name string, o *OpStats, secs float64) OpSummary {
	s := OpSummary{
		Name:        name,
		Count:       o.Count,
		Errors:      o.Errors,
		Dropped:     o.Dropped,
		Interrupted: o.Interrupted,
		Response:    LatencyOf(o.Response),
		Service:     LatencyOf(o.Service),
		TTFB:        LatencyOf(o.TTFB),
		BytesIn:     o.BytesIn,
		BytesOut:    o.BytesOut,
		Events:      o.Events,
		Progress:    o.Progress,
		Reinits:     o.Reinits,
		Reissues:    o.Reissues,
		ReissuedOK:  o.ReissuedOK,
		WastedMS:    textfmt.Round3(float64(o.Wasted) / 1e6),
		InputRounds: o.InputRounds,
		Throttled:   o.Throttled,
		LateStarts:  o.LateStarts,
	}
	if o.Throttled > 0 {
		s.ThrottleWaitS = textfmt.Round3(o.ThrottleWait.Seconds())
	}
	s.addDropped(o.Response, o.DropLB, secs)
	if secs > 0 {
		s.Rate = textfmt.Round3(float64(o.Count) / secs)
	}
	if o.Count > 0 {
		s.ErrorRate = float64(o.Errors) / float64(o.Count)
	}
	for c, n := range o.Classes {
		if n > 0 && outcome.Class(c) != outcome.ClassOK {
			if s.ErrorsByClass == nil {
				s.ErrorsByClass = map[string]int64{}
			}
			s.ErrorsByClass[outcome.Class(c).String()] = n
			if ex := o.Examples[c]; ex != "" {
				if s.ErrorExamples == nil {
					s.ErrorExamples = map[string]string{}
				}
				s.ErrorExamples[outcome.Class(c).String()] = ex
			}
		}
	}
	for code, n := range o.Status.All {
		if n > 0 {
			if s.Status == nil {
				s.Status = map[string]int64{}
			}
			s.Status[strconv.Itoa(code)] = n
		}
	}
	if limited := o.Classes[outcome.ClassResumeLimit]; o.Resumes > 0 || o.RetryCapped.N > 0 || limited > 0 {
		s.Resumes = &ResumeSummary{Attempts: o.Resumes, Accepted: o.ResumesOK, Early: o.EarlyResume,
			TimeToResume: LatencyOf(o.Resume), Wait: LatencyOf(o.Wait), ViaLink: o.ResumesLink, Limited: limited}
		s.Resumes.setCap(o.RetryCapped)
	}
	if o.Streams > 0 {
		s.Ledger = LedgerOf(o.Streams, o.Faulty, o.Verdicts)
		s.Ledger.ViaLink, s.Ledger.LinksRefused = o.StreamsLink, o.LinksRefused
	}
	s.MCPSummary = mcpSummaryOf(o)
	s.Checks = checkSummaries(o.Checks)
	return s
}

// LedgerOf builds a stream ledger summary with every stream verdict
// present (zeros included).
func LedgerOf(streams, faulty int64, v [outcome.NumVerdicts]int64) *LedgerSummary {
	l := &LedgerSummary{Streams: streams, Faulty: faulty, Verdicts: map[string]int64{}}
	for _, vd := range outcome.StreamVerdicts {
		l.Verdicts[vd.String()] = v[vd]
	}
	return l
}

// GeneratorCost computes the generator's cost between two readings for ops
// completed operations.
func GeneratorCost(from, to Usage, ops int64, numCPU int, includesServer bool) Generator {
	g := Generator{NumCPU: numCPU, IncludesServer: includesServer, MaxRSSMB: textfmt.Round3(float64(to.MaxRSS) / (1 << 20))}
	cpu := (to.CPU - from.CPU).Seconds()
	wall := to.At.Sub(from.At).Seconds()
	g.CPUSeconds = textfmt.Round3(cpu)
	if ops > 0 {
		g.CPUPerOpUS = textfmt.Round3(cpu * 1e6 / float64(ops))
	}
	if wall > 0 {
		g.Cores = textfmt.Round3(cpu / wall)
	}
	return g
}

// Wave is the analysis of one storm: every open stream cut at once.
type Wave struct {
	AtS        float64 `json:"at_s"`        // since the start of the run
	Cuts       int64   `json:"cuts"`        // streams the wave cut
	Attempts   int64   `json:"attempts"`    // reconnect attempts its cuts caused, until the next wave or the end
	Early      int64   `json:"early"`       // of which before the retry hint had passed
	PeakPerSec float64 `json:"peak_per_s"`  // most attempts in any 100 ms window, per second
	FirstMS    float64 `json:"first_ms"`    // first attempt, after the wave
	P50MS      float64 `json:"p50_ms"`      // half of the attempts were made by then
	P95MS      float64 `json:"p95_ms"`      // 95 %
	LastMS     float64 `json:"last_ms"`     // last attempt
	SpreadMS   float64 `json:"spread_ms"`   // p95 − first: how long the wave lasted
	Errors     int64   `json:"errors"`      // op errors from the wave to recovery (or the end)
	PeakP99MS  float64 `json:"peak_p99_ms"` // the worst interval p99 from the wave to recovery
	RecoveryS  float64 `json:"recovery_s"`  // from the cut to the end of the degraded intervals after the wave; 0: none degraded; -1: degraded to the end
	BaseP99MS  float64 `json:"base_p99_ms"` // pre-storm envelope: the second highest interval p99 of the 10 s before
	BaseErrors float64 `json:"base_error_rate"`
	// Normal counts the other reconnect attempts in the same span (no
	// storm's cut before them: streams the server ended, or other
	// faults); NormalPerSec is their rate in the 10 s before the cut.
	Normal       int64   `json:"normal_attempts"`
	NormalPerSec float64 `json:"normal_per_s_before"`
	// ViaLink counts the wave's attempts sent to a stream's rel="stream"
	// URL (SEP-1335) instead of the MCP endpoint.
	ViaLink int64 `json:"via_stream_link,omitempty"`
}

// ThresholdsFailed counts the failed thresholds.
func ThresholdsFailed(rs []ThresholdResult) int {
	n := 0
	for _, r := range rs {
		if !r.Pass {
			n++
		}
	}
	return n
}
