// Package workload turns a profile (YAML) into a plan and runs it: the
// schedule (open model: arrival rate; closed model: VUs), the engine that
// admits operations without blocking, and the VU lifecycle (each VU owns
// one MCP session).
package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/units"
	"github.com/mcpbench/mcpbench/metrics"
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
	// Protocol: auto (the default: server/discover first, initialize if
	// the server is legacy), 2026-07-28, 2025-11-25, 2025-06-18 or
	// 2025-03-26.
	Protocol string `yaml:"protocol"`
	// VUs: closed model, the number of VUs; open model, the VUs started
	// before the clock starts (default 10).
	VUs int `yaml:"vus"`
	// MaxVUs caps VUs in the open model. Default: enough VUs to keep the
	// rate while each op takes up to max_delay, rate × max_delay (at least
	// vus, at most DefaultMaxVUsCap); VUs are added only when needed.
	MaxVUs int `yaml:"max_vus"`
	// Rate is the arrival rate in ops/s; > 0 selects the open model.
	Rate float64 `yaml:"rate"`
	// MaxDelay: in the open model an op that cannot start within MaxDelay
	// of its intended start (every VU busy, max_vus reached) is dropped and
	// counted (default 1 s).
	MaxDelay Duration `yaml:"max_delay"`
	// Duration of the measured window (default 10 s).
	Duration Duration `yaml:"duration"`
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
	// messages larger than their small buffers (default: enough for one
	// message at the limits above); a large message waits for room.
	MaxBufferedBytes units.Size `yaml:"max_buffered_bytes"`
	// FollowRedirects follows 307/308 answers to the same origin (counted).
	FollowRedirects bool     `yaml:"follow_redirects"`
	Timeouts        Timeouts `yaml:"timeouts"`
	Resume          Resume   `yaml:"resume"`
	// Server configures the embedded reference server (ignored with URL).
	Server ServerSpec `yaml:"server"`
	Ops    []OpSpec   `yaml:"ops"`
	// Chaos is the fault plan (see package chaos); nil injects nothing.
	Chaos *chaos.Plan `yaml:"chaos"`
	// Churn replaces sessions at a rate while the run goes.
	Churn Churn `yaml:"churn"`
	// CheckDeleted probes every deleted session: the server must answer
	// 404 to it (a session hygiene verdict).
	CheckDeleted bool `yaml:"check_deleted"`
	// Sweep steps the load (mcpbench sweep); Soak configures a soak
	// (mcpbench soak).
	Sweep *SweepSpec `yaml:"sweep"`
	Soak  *SoakSpec  `yaml:"soak"`
	// Thresholds are pass/fail criteria checked at the end, e.g.
	// "tools/call:p99<200ms", "error_rate<1%", "lost==0" (see
	// metrics.Threshold); a crossed one makes the run exit 99.
	Thresholds []string `yaml:"thresholds"`

	// parseErrs are the YAML problems found while decoding; Validate
	// reports them with the rest.
	parseErrs []error
	// maxVUsAuto marks a MaxVUs that Defaults sized from the rate (a sweep
	// sizes it again for each step's rate).
	maxVUsAuto bool
}

// DefaultMaxVUsCap bounds the default max_vus: each VU holds a session
// (one or two sockets) and costs the server an initialize.
const DefaultMaxVUsCap = 5000

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
	// Method: tools/call, tools/list, resources/list, resources/read,
	// prompts/list, prompts/get or ping.
	Method string `yaml:"method"`
	// Tool (tools/call), Prompt (prompts/get), URI (resources/read).
	Tool   string `yaml:"tool"`
	Prompt string `yaml:"prompt"`
	URI    string `yaml:"uri"`
	// Arguments of the tool or prompt.
	Arguments map[string]any `yaml:"arguments"`
	// Progress attaches a progressToken to the request.
	Progress bool `yaml:"progress"`
	// Weight in the mix (default 1; 0 leaves the op out).
	Weight *int `yaml:"weight"`
	// Expect is ground truth for the replay ledger.
	Expect Expect `yaml:"expect"`
}

// Expect is what an op's stream must deliver.
type Expect struct {
	// Progress is the number of progress notifications (0: use the total
	// the server announces).
	Progress int `yaml:"progress"`
}

// Methods lists the operations the driver sends.
var Methods = []string{"tools/call", "tools/list", "resources/list", "resources/read", "prompts/list", "prompts/get", "ping"}

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

var reLine = regexp.MustCompile(`^line (\d+): `)

// withField prefixes a "line N: ..." message with the field at line N.
func withField(m string, paths map[int]string) string {
	s := reLine.FindStringSubmatch(m)
	if s == nil {
		return m
	}
	n, _ := strconv.Atoi(s[1])
	if f, ok := paths[n]; ok {
		return f + " (line " + s[1] + "): " + m[len(s[0]):]
	}
	return m
}

// fieldPaths maps the line of each mapping key in a YAML document to its
// path ("ops[0].method").
func fieldPaths(data []byte) map[int]string {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return nil
	}
	out := map[int]string{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				if _, seen := out[k.Line]; !seen {
					out[k.Line] = p
				}
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(&doc, "")
	return out
}

var (
	reUnknown = regexp.MustCompile(`^line (\d+): field (\S+) not found in type \S+$`)
	reType    = regexp.MustCompile(`^line (\d+): cannot unmarshal !!(\w+) ` + "`" + `?([^` + "`" + `]*)` + "`" + `? into (\S+)$`)
)

// tidyYAMLError rewrites yaml.v3 messages in the field's terms.
func tidyYAMLError(m string) string {
	if s := reUnknown.FindStringSubmatch(m); s != nil {
		return fmt.Sprintf("line %s: unknown field %q", s[1], s[2])
	}
	if s := reType.FindStringSubmatch(m); s != nil {
		want := s[4]
		switch {
		case strings.HasPrefix(want, "int"):
			want = "an integer"
		case strings.HasPrefix(want, "float"):
			want = "a number"
		case want == "bool":
			want = "true or false"
		case strings.HasPrefix(want, "[]"):
			want = "a list"
		case strings.HasPrefix(want, "map"), strings.HasPrefix(want, "workload."):
			want = "a mapping"
		}
		return fmt.Sprintf("line %s: %q is not %s", s[1], s[3], want)
	}
	return m
}

// LoadProfile reads a built-in profile by name, or else a YAML file. A
// profile with YAML mistakes (unknown fields, wrong types) is still
// returned: Validate reports those mistakes together with the rest, after
// flags are applied. The error is for a profile that cannot be read at all.
func LoadProfile(nameOrFile string) (*Profile, error) {
	data, err := profiles.Read(nameOrFile)
	if err != nil {
		if !strings.ContainsAny(nameOrFile, "/\\.") {
			return nil, fmt.Errorf("profile %q: no built-in profile of that name (built-ins: %s) and no such file", nameOrFile, strings.Join(profiles.Names(), ", "))
		}
		data, err = os.ReadFile(nameOrFile)
		if err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
	}
	p, errs := ParseProfile(data)
	p.parseErrs = errs
	p.Source = nameOrFile
	if p.Name == "" {
		p.Name = strings.TrimSuffix(nameOrFile, ".yaml")
	}
	return p, nil
}

// ProfileError lists every problem of a profile.
type ProfileError struct {
	Source string
	Errs   []error
}

func (e *ProfileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "profile %s: %d problem", e.Source, len(e.Errs))
	if len(e.Errs) != 1 {
		b.WriteString("s")
	}
	b.WriteString(":")
	for _, err := range e.Errs {
		b.WriteString("\n  - ")
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the problems.
func (e *ProfileError) Unwrap() []error { return e.Errs }

// Defaults fills zero values with the documented defaults.
func (p *Profile) Defaults() {
	if p.VUs == 0 {
		p.VUs = 10
	}
	if p.MaxDelay == 0 {
		p.MaxDelay = Duration(time.Second)
	}
	if p.MaxVUs == 0 || p.maxVUsAuto {
		p.MaxVUs, p.maxVUsAuto = p.VUs, false
		if p.Open() {
			// Little's law: keeping rate R while each op takes up to the
			// max delay D needs R × D VUs in flight; beyond that an op
			// waits longer than D and is dropped anyway.
			need := int(math.Ceil(p.Rate * p.MaxDelay.D().Seconds()))
			p.MaxVUs, p.maxVUsAuto = max(p.VUs, min(need, DefaultMaxVUsCap)), true
		}
	}
	if p.Duration == 0 {
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
}

// Open reports whether the profile uses the open model (an arrival rate).
func (p *Profile) Open() bool { return p.Rate > 0 }

// Validate checks the profile (after Defaults) and returns every problem,
// each naming its field; a ${NAME} reference to a variable not set in the
// environment is one (see ResolveEndpoint).
func (p *Profile) Validate() []error {
	errs := append([]error(nil), p.parseErrs...)
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	_, epErrs := p.endpoint(os.LookupEnv) // url and headers: ${NAME} set, URL well-formed
	_, opErrs := p.expandOps(os.LookupEnv)
	errs = append(append(errs, epErrs...), opErrs...)
	if p.Protocol != "" && p.Protocol != driver.ProtocolAuto && !slices.Contains(driver.SupportedProtocols, p.Protocol) {
		add("protocol: %q not supported (want auto or one of %s)", p.Protocol, strings.Join(driver.SupportedProtocols, ", "))
	}
	if p.VUs < 1 {
		add("vus: %d, want at least 1", p.VUs)
	}
	if p.Rate < 0 {
		add("rate: %g, want > 0 (open model) or 0 (closed model)", p.Rate)
	}
	if p.Open() && p.MaxVUs < p.VUs {
		add("max_vus: %d is below vus (%d)", p.MaxVUs, p.VUs)
	}
	if p.Duration.D() <= 0 {
		add("duration: %v, want > 0", p.Duration.D())
	}
	for name, d := range map[string]Duration{"warmup": p.Warmup, "graceful_stop": p.GracefulStop, "think_time": p.ThinkTime,
		"max_delay": p.MaxDelay, "timeouts.connect": p.Timeouts.Connect, "timeouts.request": p.Timeouts.Request, "timeouts.stream_idle": p.Timeouts.StreamIdle,
		"resume.default_retry": p.Resume.DefaultRetry} {
		if d < 0 {
			add("%s: %v, want ≥ 0", name, d.D())
		}
	}
	switch p.Resume.Policy {
	case "", driver.ReconnectHonourRetry, driver.ReconnectImmediate, driver.ReconnectBackoff:
	default:
		add("resume.policy: %q, want honour-retry, immediate or backoff", p.Resume.Policy)
	}
	if p.Chaos != nil {
		p.Chaos.Defaults()
		errs = append(errs, p.Chaos.Validate("chaos")...)
	}
	if p.Sweep != nil {
		sw := *p.Sweep
		sw.defaults()
		errs = append(errs, sw.validate()...)
	}
	if p.Soak != nil && p.Soak.Checkpoint < 0 {
		add("soak.checkpoint: want ≥ 0")
	}
	for i, t := range p.Thresholds {
		if _, err := metrics.ParseThreshold(t); err != nil {
			add("thresholds[%d]: %v", i, err)
		}
	}
	if p.Churn.Rate < 0 {
		add("churn.rate: %g, want ≥ 0", p.Churn.Rate)
	}
	for name, v := range map[string]units.Size{"max_message_bytes": p.MaxMessageBytes, "max_event_bytes": p.MaxEventBytes, "max_buffered_bytes": p.MaxBufferedBytes} {
		if v != 0 && v < 1024 {
			add("%s: %v, want at least 1KiB (0: the default)", name, v)
		}
	}
	if p.MaxEventBytes > 1<<30 {
		add("max_event_bytes: %v, want at most 1GiB", p.MaxEventBytes)
	}
	if p.Server.GETRetry < 0 || p.Server.Tick < 0 {
		add("server: get_retry and tick must be ≥ 0")
	}
	switch p.Server.Mode {
	case "", "stateful", "stateless", "json", "2026-07-28":
	default:
		add("server.mode: %q, want stateful, stateless, json or 2026-07-28", p.Server.Mode)
	}
	for k := range p.Headers {
		if _, _, err := driver.ParseHeader(k + ": x"); err != nil {
			add("headers: %q is not a header name", k)
		}
	}
	if len(p.Ops) == 0 {
		add("ops: empty, want at least one operation")
	}
	total := 0
	for i, o := range p.Ops {
		f := fmt.Sprintf("ops[%d]", i)
		if o.Name != "" {
			f = fmt.Sprintf("ops[%d] (%s)", i, o.Name)
		}
		if !slices.Contains(Methods, o.Method) {
			add("%s.method: %q, want one of %s", f, o.Method, strings.Join(Methods, ", "))
		}
		switch o.Method {
		case "tools/call":
			if o.Tool == "" {
				add("%s.tool: required for tools/call", f)
			}
		case "prompts/get":
			if o.Prompt == "" {
				add("%s.prompt: required for prompts/get", f)
			}
		case "resources/read":
			if o.URI == "" {
				add("%s.uri: required for resources/read", f)
			}
		}
		if o.Method != "tools/call" && o.Method != "prompts/get" && len(o.Arguments) > 0 {
			add("%s.arguments: only tools/call and prompts/get take arguments", f)
		}
		if o.Weight != nil {
			if *o.Weight < 0 {
				add("%s.weight: %d, want ≥ 0", f, *o.Weight)
			} else {
				total += *o.Weight
			}
		}
		if o.Expect.Progress < 0 {
			add("%s.expect.progress: %d, want ≥ 0", f, o.Expect.Progress)
		}
	}
	if len(p.Ops) > 0 && total == 0 && len(p.parseErrs) == 0 { // a weight that failed to parse reads 0
		add("ops: all weights are 0")
	}
	return errs
}

// opName is the default label of an op.
func (o *OpSpec) opName() string {
	if o.Name != "" {
		return o.Name
	}
	switch o.Method {
	case "tools/call":
		return o.Method + ":" + o.Tool
	case "prompts/get":
		return o.Method + ":" + o.Prompt
	case "resources/read":
		return o.Method + ":" + o.URI
	}
	return o.Method
}

// params renders the op's JSON-RPC params (without _meta).
func (o *OpSpec) params() (json.RawMessage, error) {
	var v map[string]any
	switch o.Method {
	case "tools/call":
		v = map[string]any{"name": o.Tool, "arguments": orEmpty(o.Arguments)}
	case "prompts/get":
		args := map[string]string{}
		for k, a := range o.Arguments {
			args[k] = fmt.Sprint(a) // prompt arguments are strings
		}
		v = map[string]any{"name": o.Prompt, "arguments": args}
	case "resources/read":
		v = map[string]any{"uri": o.URI}
	default:
		return nil, nil
	}
	return json.Marshal(v)
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
