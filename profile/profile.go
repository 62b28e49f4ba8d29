// Package profile is the YAML profile language: Profile and its specs
// (load, stages, ops, scenarios, checks, thresholds, chaos, sweep and
// soak as data), ParseProfile and LoadProfile (MaxProfileBytes,
// MaxProfileOps; built-in profiles from package profiles), Defaults,
// Validate (every problem at once, each naming its field), Override (a
// value by its YAML path over the file's), ${NAME} references (env.go)
// and the settings' errors (SettingError). Resolve is what validation
// resolves on the way (endpoints, expanded ops, argument templates of
// package argtmpl, network settings): package workload compiles a plan
// from it. Nothing here runs a test or opens a connection.
//
// Files: profile.go, validate.go, overrides.go, specs.go, env.go,
// endpoints.go, net.go, load.go, scenario.go, checks.go, mcpops.go,
// refs.go (-e values, {{step}} references), argcompile.go (the ops'
// templates), abort_spec.go, iterations_spec.go, setting.go.
package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/units"
	"github.com/mcpbench/mcpbench/profiles"
	"go.yaml.in/yaml/v3"
)

// Profile is a workload as written in YAML (see profiles/*.yaml for
// examples). Zero values mean the documented defaults; Validate reports
// every problem at once.
type Profile struct {
	// Source is where the profile came from: a built-in's name or the
	// file's path (for error messages; not a YAML field).
	Source      string `yaml:"-"`
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// URL is the MCP endpoint; "" benchmarks the embedded reference server.
	// ${NAME} references are expanded from the environment (as in
	// Headers values and ops' strings; see env.go); user:password@ is sent
	// as Authorization: Basic.
	URL string `yaml:"url"`
	// URLs are more endpoints (replicas of url reached without a load
	// balancer): sessions are spread over url and these by VU, each
	// staying on its endpoint; results are given per endpoint and in
	// total. The headers apply to every endpoint.
	URLs []string `yaml:"urls"`
	// SourceAddrs are local addresses to connect from, round robin per
	// connection: "127.0.0.2,127.0.0.3", a range "127.0.0.2-127.0.0.9" or
	// a CIDR "127.0.0.0/28" (httpclient.ParseSourceAddrs), so more than one
	// address's ~64k ephemeral ports can reach one server address.
	SourceAddrs string `yaml:"source_addrs"`
	// Protocol: auto (the default: server/discover first, initialize if
	// the server is legacy), 2026-07-28, 2025-11-25, 2025-06-18 or
	// 2025-03-26.
	Protocol string `yaml:"protocol"`
	// VUs: closed model, the number of VUs; open model, the VUs started
	// before the clock starts (default 10).
	VUs int `yaml:"vus"`
	// Concurrency is the number of requests a session has in flight at
	// once (default 1): each VU (one session, one agent) runs that many
	// lanes, so the closed model has vus × concurrency requests in flight
	// and an open-model arrival takes any free lane of any session. A
	// notification of one request that arrives on another's stream is
	// judged misrouted.
	Concurrency int `yaml:"concurrency"`
	// MaxVUs caps VUs in the open model. Default: enough VUs to keep the
	// rate while each op takes up to max_delay, rate × max_delay (at least
	// vus, at most DefaultMaxVUsCap); VUs are added only when needed.
	MaxVUs int `yaml:"max_vus"`
	// Rate is the arrival rate in ops/s; > 0 selects the open model. With
	// stages it is the rate they start from (0 allowed with model: open).
	Rate float64 `yaml:"rate"`
	// Model is open (arrival rate) or closed (VUs); "" means open when rate
	// > 0, else closed.
	Model string `yaml:"model"`
	// Stages ramp the load, k6 style (ramping-arrival-rate in the open
	// model, ramping-vus in the closed): each moves the target rate (or the
	// active VUs) linearly from the previous stage's target — the first
	// from rate (or vus) — to its own over its duration. With stages the
	// measured window is their total (duration unset); the warm-up runs at
	// the starting rate (or vus).
	Stages []StageSpec `yaml:"stages"`
	// MaxDelay: in the open model an op that cannot start within MaxDelay
	// of its intended start (every VU busy, max_vus reached) is dropped and
	// counted (default 1 s).
	MaxDelay Duration `yaml:"max_delay"`
	// Duration of the measured window (default 10 s; with Iterations, its
	// cap: default 10 min).
	Duration Duration `yaml:"duration"`
	// Iterations, when > 0, is a fixed number of iterations (ops of the
	// mix, or scenario iterations) the VUs share in the measured window,
	// then the run stops (k6's shared-iterations; closed model only;
	// iterations.go).
	Iterations int `yaml:"iterations"`
	// Warmup runs before the measured window; its results are discarded.
	Warmup Duration `yaml:"warmup"`
	// GracefulStop lets in-flight ops finish after the window (default 5 s).
	GracefulStop Duration `yaml:"graceful_stop"`
	// ThinkTime is a pause between a closed-model VU's ops.
	ThinkTime Duration `yaml:"think_time"`
	// GETStream opens a standalone GET stream per session.
	GETStream bool `yaml:"get_stream"`
	// Seed makes op choice and jitter reproducible (default 1).
	Seed int64 `yaml:"seed"`
	// Headers are added to every request (e.g. Authorization: "Bearer
	// ${TOKEN}"); an Authorization header wins over the URL's userinfo.
	Headers map[string]string `yaml:"headers"`
	// MaxMessageBytes bounds one JSON answer (default 64MiB); larger ones
	// fail with an error naming the limit.
	MaxMessageBytes units.Size `yaml:"max_message_bytes"`
	// MaxEventBytes bounds one SSE event (default 16MiB).
	MaxEventBytes units.Size `yaml:"max_event_bytes"`
	// MaxBufferedBytes is the memory all sessions together may hold for
	// messages larger than their small buffers (default: twice the larger
	// of the limits above, one message of unknown size); a large message
	// waits for room.
	MaxBufferedBytes units.Size `yaml:"max_buffered_bytes"`
	// FollowRedirects follows 307/308 answers to the same origin (counted).
	FollowRedirects bool     `yaml:"follow_redirects"`
	Timeouts        Timeouts `yaml:"timeouts"`
	Resume          Resume   `yaml:"resume"`
	// Server configures the embedded reference server (ignored with URL).
	Server ServerSpec `yaml:"server"`
	Ops    []OpSpec   `yaml:"ops"`
	// Scenario is one scenario's steps, run per VU iteration instead of the
	// op mix (see ScenarioSpec); Scenarios are several, named, with
	// weights. Their steps name entries of Ops.
	Scenario  []StepSpec     `yaml:"scenario"`
	Scenarios []ScenarioSpec `yaml:"scenarios"`
	// Data is the data file of the ops' argument templates ({{.column}},
	// see args.go) for ops without their own.
	Data *argtmpl.DataSpec `yaml:"data"`
	// Chaos is the fault plan (see package chaos); nil injects nothing.
	Chaos *chaos.Plan `yaml:"chaos"`
	// Churn replaces sessions at a rate while the run goes.
	Churn Churn `yaml:"churn"`
	// CheckDeleted probes every deleted session: the server must answer
	// 404 to it (a session hygiene verdict).
	CheckDeleted bool `yaml:"check_deleted"`
	// HTTP is the HTTP version: auto (default: mcpbench's HTTP/1.1 for
	// http://, ALPN for https://), 1.1, or 2 (h2; h2c for http://).
	HTTP string `yaml:"http"`
	// Proxy: "" honours HTTP_PROXY/HTTPS_PROXY/NO_PROXY, none goes direct,
	// a URL sends everything through it (${NAME} expanded; credentials
	// never shown).
	Proxy string `yaml:"proxy"`
	// TLS: CA, client certificate (mutual TLS), server name, insecure.
	TLS TLSSpec `yaml:"tls"`
	// OAuth authorizes with client credentials (nil: no OAuth).
	OAuth *OAuthSpec `yaml:"oauth"`
	// Sweep steps the load (mcpbench sweep); Soak configures a soak
	// (mcpbench soak).
	Sweep *SweepSpec `yaml:"sweep"`
	Soak  *SoakSpec  `yaml:"soak"`
	// Thresholds are pass/fail criteria checked at the end, e.g.
	// "tools/call:p99<200ms", "error_rate<1%", "lost==0" (see
	// verdict.Threshold); a crossed one makes the run exit 99. Compile
	// refuses one that cannot be judged: a bad metric, scope or unit, or
	// an op or scenario scope the test does not have.
	Thresholds []string `yaml:"thresholds"`
	// ThresholdFlags is how many of Thresholds, at the end, came from the
	// command line (--threshold): their problems are reported as
	// --threshold instead of thresholds[i].
	ThresholdFlags int `yaml:"-" json:"-"`
	// Checks apply to every op ("CHECK") or to the ops an op name, method
	// or scenario selects ("OP => CHECK"), after each op's own checks;
	// CheckFlags is how many, at the end, came from --check (their
	// problems are reported as --check instead of checks[i]).
	Checks     []string `yaml:"checks"`
	CheckFlags int      `yaml:"-" json:"-"`
	// AbortOnFail are thresholds that stop the run as soon as they are
	// crossed (k6's abortOnFail), judged at the end of each interval of
	// the measured window: "p99<200ms", or {threshold: ..., delay: 10s}
	// to judge only from 10 s into the window on (abort.go).
	AbortOnFail []AbortSpec `yaml:"abort_on_fail"`
	// Env are values for templates ({{env "KEY"}}), like k6's __ENV:
	// -e KEY=VALUE sets one. A value may hold ${NAME} (a secret from the
	// environment): expanded for requests only, shown as written.
	Env map[string]string `yaml:"env"`

	// parseErrs are the YAML problems found while decoding; Validate
	// reports them with the rest.
	parseErrs []error
	// envx is Env with ${NAME} expanded (resolve; never shown).
	envx map[string]string
	// maxVUsAuto marks a MaxVUs that Defaults sized from the rate (a sweep
	// sizes it again for each step's rate).
	maxVUsAuto bool
	// dir is the directory of the profile's file (LoadProfile): data
	// files are read relative to it.
	dir string
}

// MaxConcurrency bounds Profile.Concurrency.
const MaxConcurrency = 256

// DefaultMaxVUsCap bounds the default max_vus: each VU holds a session
// (one or two sockets) and costs the server an initialize.
const DefaultMaxVUsCap = 5000

// StageSpec is one stage of a ramp.
type StageSpec struct {
	Duration Duration `yaml:"duration"`
	// Target is the rate (ops/s, open model) or the active VUs (closed
	// model) at the end of the stage.
	Target float64 `yaml:"target"`
}

// ParseStage reads one stage written as k6's --stage flag does:
// "DURATION:TARGET", e.g. "10s:500" (10 s ramping to 500 ops/s in the open
// model, 500 VUs in the closed one). Errors name what is wrong.
func ParseStage(s string) (StageSpec, error) {
	ds, ts, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return StageSpec{}, fmt.Errorf("stage %q: want DURATION:TARGET, e.g. 10s:500", s)
	}
	d, err := time.ParseDuration(strings.TrimSpace(ds))
	if err != nil || d <= 0 {
		if hint, ok := units.UnitHint(ds); ok && err != nil {
			return StageSpec{}, fmt.Errorf("stage %q: duration %q: %s", s, ds, hint)
		}
		return StageSpec{}, fmt.Errorf("stage %q: duration %q: want a positive Go duration such as 10s", s, ds)
	}
	t, err := strconv.ParseFloat(strings.TrimSpace(ts), 64)
	if err != nil || t < 0 || math.IsInf(t, 0) {
		return StageSpec{}, fmt.Errorf("stage %q: target %q: want a number ≥ 0", s, ts)
	}
	return StageSpec{Duration: Duration(d), Target: t}, nil
}

// Timeouts of the driver (0: driver defaults: connect 5 s, request 30 s,
// stream idle 30 s).
type Timeouts struct {
	Connect    Duration `yaml:"connect"`
	Request    Duration `yaml:"request"`
	StreamIdle Duration `yaml:"stream_idle"`
}

// Resume configures reconnects of broken streams.
type Resume struct {
	// Policy: honour-retry (default), immediate, backoff.
	Policy string `yaml:"policy"`
	// DefaultRetry is the wait when the server sent no retry hint (1 s).
	DefaultRetry Duration `yaml:"default_retry"`
	// MaxAttempts bounds attempts without progress (5; -1 disables resuming).
	MaxAttempts int `yaml:"max_attempts"`
	// Reissue re-sends a request whose stream broke before any event id
	// (2026-07-28: any broken request).
	Reissue bool `yaml:"reissue"`
	// MaxReissues bounds the re-sends of one request (default 3).
	MaxReissues int `yaml:"max_reissues"`
}

// ServerSpec configures the embedded reference server.
type ServerSpec struct {
	// Mode: stateful (default), stateless, json, 2026-07-28.
	Mode string `yaml:"mode"`
	// GETRetry is the retry hint the server sends on GET streams (0: none).
	GETRetry Duration `yaml:"get_retry"`
	// Tick makes every session receive a numbered notification on its GET
	// stream this often (0: off).
	Tick Duration `yaml:"tick"`
	// PageSize paginates the server's lists: at most this many items a
	// page (0: the SDK's 1000).
	PageSize int `yaml:"page_size"`
}

// Churn replaces sessions while the run goes: each VU closes its session
// (DELETE) and opens a new one after a lifetime drawn around VUs / Rate
// (×0.5 … ×1.5), so about Rate sessions per second are replaced.
type Churn struct {
	// Rate is sessions replaced per second; 0 means no churn.
	Rate float64 `yaml:"rate"`
}

// OpSpec is one entry of the op mix.
type OpSpec struct {
	// Name labels the op in reports (default: method, plus :tool, :prompt
	// or :uri).
	Name string `yaml:"name"`
	// Method: one of Methods.
	Method string `yaml:"method"`
	// Tool (tools/call), Prompt (prompts/get, completion/complete), URI
	// (resources/read, resources/subscribe and unsubscribe; a resource
	// template for completion/complete).
	Tool   string `yaml:"tool"`
	Prompt string `yaml:"prompt"`
	URI    string `yaml:"uri"`
	// Arguments of the tool or prompt. A string holding "{{" is a
	// template rendered per request: {{rand_int 1 100}}, {{seq}},
	// {{.column}} of the data file … (see args.go and the README).
	Arguments map[string]any `yaml:"arguments"`
	// Data is the op's data file for {{.column}} (default: the profile's).
	Data *argtmpl.DataSpec `yaml:"data"`
	// Progress attaches a progressToken to the request.
	Progress bool `yaml:"progress"`
	// Weight in the mix (default 1; 0 leaves the op out).
	Weight *int `yaml:"weight"`
	// Expect is ground truth for the replay ledger.
	Expect Expect `yaml:"expect"`

	// The rest of MCP (mcpops.go). Level is logging/setLevel's level;
	// Argument what completion/complete completes (Arguments are then its
	// context's resolved arguments).
	Level    string            `yaml:"level"`
	Argument *CompleteArgument `yaml:"argument"`
	// Changes is the URI of the resource a tools/call changes (such as
	// the reference server's touch tool): a session subscribed to it
	// measures the latency of the notifications/resources/updated that
	// follows, from the call's send.
	Changes string `yaml:"changes"`
	// Cancel cancels a share of the op's calls still in flight after a
	// while, e.g. {after: 50ms, p: 0.1}.
	Cancel *CancelSpec `yaml:"cancel"`
	// MaxPages bounds the pages a list op follows (default 100).
	MaxPages int `yaml:"max_pages"`
	// Checks judge each result of the op: PATH OP VALUE on the result
	// member (content.0.text == "hello", structured.n >= 1, is_error ==
	// false) or output_schema (package check; at most 64). Counted per
	// check, reported and thresholdable (checks>0.99).
	Checks []string `yaml:"checks"`
}

// Expect is what an op's stream must deliver.
type Expect struct {
	// Progress is the number of progress notifications (0: use the total
	// the server announces).
	Progress int `yaml:"progress"`
}

// Methods lists the operations the driver sends.
var Methods = []string{"tools/call", "tools/list", "resources/list", "resources/read", "resources/templates/list", "resources/subscribe",
	"resources/unsubscribe", "prompts/list", "prompts/get", "completion/complete", "logging/setLevel", "ping"}

// Duration is a time.Duration that reads "1.5s", "200ms" or a number of
// seconds from YAML.
type Duration = units.Duration

// ParseProfile decodes YAML. Unknown fields and type mistakes are returned
// together (all of them, with line numbers); semantic checks are Validate's.
func ParseProfile(data []byte) (*Profile, []error) {
	var p Profile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(&p)
	if err == nil || errors.Is(err, io.EOF) {
		return &p, nil
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		paths := fieldPaths(data)
		errs := make([]error, 0, len(te.Errors))
		for _, m := range te.Errors {
			errs = append(errs, errors.New(withField(tidyYAMLError(m), paths)))
		}
		return &p, errs
	}
	return &p, []error{fmt.Errorf("yaml: %v", err)}
}

// Limits on a profile, checked before anything is built from it (a 50 MB
// profile of 655k ops took 22 GB before: issue 33).
const (
	// MaxProfileBytes bounds a profile file (4 MiB: a thousand ops take
	// ~35 KB): LoadProfile refuses a larger one before reading it.
	MaxProfileBytes = 4 << 20
	// MaxProfileOps bounds the ops of a profile (10,000): each op is a
	// label of its own in every report, with its own histograms and
	// counters in the recorder: about 9 KB per op, plus ~4 KB per op for
	// each recorder shard it is recorded in (4 per core, at most the VUs
	// and max(4, 65,536 / ops)); 1,000 ops on 2 cores ~40 MB
	// (metrics.BenchmarkRecorderOps), 10,000 ops at most ~330 MB.
	// Validation refuses more before checking or building any op.
	MaxProfileOps = 10_000
	// MaxProblemsShown is how many of a profile's problems ProfileError
	// prints (the first ones, then the count of the rest).
	MaxProblemsShown = 50
)

// LoadProfile reads a built-in profile by name, or else a YAML file (at
// most MaxProfileBytes). A profile with YAML mistakes (unknown fields,
// wrong types) is still returned: Validate reports those mistakes together
// with the rest, after flags are applied. The error is for a profile that
// cannot be read at all, or is too large.
func LoadProfile(nameOrFile string) (*Profile, error) {
	data, err := profiles.Read(nameOrFile)
	dir := "" // a built-in's data files are read from the working directory
	if err != nil {
		if !strings.ContainsAny(nameOrFile, "/\\.") {
			return nil, fmt.Errorf("profile %q: no built-in profile of that name (built-ins: %s) and no such file", nameOrFile, strings.Join(profiles.Names(), ", "))
		}
		data, err = readProfileFile(nameOrFile)
		if err != nil {
			return nil, err
		}
		dir = filepath.Dir(nameOrFile)
	}
	p, errs := ParseProfile(data)
	p.parseErrs = errs
	p.dir = dir
	p.Source = nameOrFile
	if p.Name == "" {
		p.Name = strings.TrimSuffix(nameOrFile, ".yaml")
	}
	return p, nil
}

// Dir is the directory the profile's data files are read from (its
// file's: LoadProfile; "" the working directory); SetDir sets it, for a
// profile parsed from bytes that stand for that file (a child of
// --processes reads its parent's resolved profile).
func (p *Profile) Dir() string { return p.dir }

// SetDir sets Dir.
func (p *Profile) SetDir(dir string) { p.dir = dir }

// readProfileFile reads a profile file of at most MaxProfileBytes,
// refusing a larger one by its size before reading it (and a pipe or a
// growing file once it has given one byte more).
func readProfileFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxProfileBytes {
		return nil, tooLarge(path, fi.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxProfileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if len(data) > MaxProfileBytes {
		return nil, tooLarge(path, -1)
	}
	return data, nil
}

func tooLarge(path string, size int64) error {
	n := "more bytes"
	if size >= 0 {
		n = strconv.FormatInt(size, 10) + " bytes"
	}
	return fmt.Errorf("profile %s: %s, larger than a profile may be (%s, profile.MaxProfileBytes): "+
		"give per-request values in a data file (data: or an op's data:, see {{.column}}) or templates ({{rand_int 1 100}}, {{seq}}) "+
		"rather than an op each, or split the test into several profiles", path, n, units.Size(MaxProfileBytes))
}

// ProfileError lists every problem of a profile.
type ProfileError struct {
	Source string
	Errs   []error
}

// Error lists the first MaxProblemsShown problems, then the count of the
// rest.
func (e *ProfileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "profile %s: %d problem", e.Source, len(e.Errs))
	if len(e.Errs) != 1 {
		b.WriteString("s")
	}
	b.WriteString(":")
	for i, err := range e.Errs {
		if i == MaxProblemsShown {
			fmt.Fprintf(&b, "\n  … and %d more (the first %d shown; fix these and run again to see the rest)", len(e.Errs)-i, MaxProblemsShown)
			break
		}
		b.WriteString("\n  - ")
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the problems.
func (e *ProfileError) Unwrap() []error { return e.Errs }

// Clone is a copy of p that Defaults and validation may write without
// writing p: the ops (their weights) and the chaos plan are copied; what
// neither writes is shared.
func (p *Profile) Clone() *Profile {
	c := *p
	c.Ops = slices.Clone(p.Ops)
	if p.Chaos != nil {
		ch := *p.Chaos
		ch.Faults = slices.Clone(p.Chaos.Faults)
		if p.Chaos.Storm != nil {
			st := *p.Chaos.Storm
			ch.Storm = &st
		}
		c.Chaos = &ch
	}
	return &c
}

// Defaults fills zero values with the documented defaults. Idempotent.
func (p *Profile) Defaults() {
	if p.VUs == 0 {
		p.VUs = 10
	}
	if p.Concurrency == 0 {
		p.Concurrency = 1
	}
	if p.MaxDelay == 0 {
		p.MaxDelay = Duration(time.Second)
	}
	if p.MaxVUs == 0 || p.maxVUsAuto {
		p.MaxVUs, p.maxVUsAuto = p.PeakVUs(), false
		if p.Open() {
			// Little's law: keeping rate R while each op takes up to the
			// max delay D needs R × D VUs in flight; beyond that an op
			// waits longer than D and is dropped anyway.
			need := int(math.Ceil(p.PeakRate() * p.MaxDelay.D().Seconds() / float64(p.Concurrency)))
			p.MaxVUs, p.maxVUsAuto = max(p.VUs, min(need, DefaultMaxVUsCap)), true
		}
	}
	if p.Duration == 0 && len(p.Stages) == 0 && p.Iterations > 0 {
		p.Duration = Duration(DefaultIterationsCap)
	}
	if p.Duration == 0 && len(p.Stages) == 0 {
		p.Duration = Duration(10 * time.Second)
	}
	if p.GracefulStop == 0 {
		p.GracefulStop = Duration(5 * time.Second)
	}
	if p.Seed == 0 {
		p.Seed = 1
	}
	if p.Protocol == "" {
		p.Protocol = driver.ProtocolAuto
	}
	for i := range p.Ops {
		if p.Ops[i].Weight == nil {
			one := 1
			p.Ops[i].Weight = &one
		}
	}
	if p.Chaos != nil {
		p.Chaos.Defaults()
	}
}
