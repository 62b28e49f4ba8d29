package profile

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/internal/units"
	"github.com/mcpbench/mcpbench/verdict"
	"go.yaml.in/yaml/v3"
)

// Validate checks the profile (after Defaults) and returns every problem,
// each naming its field; a ${NAME} reference to a variable not set in the
// environment is one (see ResolveEndpoint).
func (p *Profile) Validate() []error {
	_, errs := p.Resolve(os.LookupEnv)
	return errs
}

// Resolved is what validating a profile resolves on the way: the
// endpoints, the ops with ${NAME} expanded, their argument programs (data
// files read) and the network settings. Compile builds the plan from it,
// so a profile is checked, expanded and its files read once.
type Resolved struct {
	Endpoint *Endpoint     // url and headers
	More     []*Endpoint   // urls
	Ops      []OpSpec      // ${NAME} expanded
	Args     []*argtmpl.Op // per op; nil: fixed arguments
	Net      driver.Config // the network settings (the HTTP client's)
}

// Resolve checks the profile (after Defaults) and resolves what a plan
// is built from (package workload's Compile), with ${NAME} references looked up with lookup. It returns
// every problem, each naming its field; with any, the Resolved parts may
// be incomplete.
func (p *Profile) Resolve(lookup secret.LookupFunc) (*Resolved, []error) {
	r := &Resolved{}
	errs := append([]error(nil), p.parseErrs...)
	if len(p.Ops) > MaxProfileOps { // refused before any op is checked or built
		return r, append(errs, tooManyOps(len(p.Ops)))
	}
	ep, epErrs := p.endpoint(lookup) // url and headers: ${NAME} set, URL well-formed
	ops, opErrs := p.expandOps(lookup)
	r.Endpoint, r.Ops = ep, ops
	errs = append(append(errs, epErrs...), opErrs...)
	more, moreErrs := p.validateEndpoints(lookup)
	r.More = more
	errs = append(errs, moreErrs...)
	errs = append(errs, p.validateLoad()...)
	errs = append(errs, p.validateIterations()...)
	errs = append(errs, p.validateTimes()...)
	errs = append(errs, p.validateSections()...)
	errs = append(errs, p.validateNet(lookup, &r.Net)...)
	errs = append(errs, p.validateSubscriptions()...)
	errs = append(errs, p.validateOps()...)
	errs = append(errs, p.validateChecks()...)
	errs = append(errs, p.validateScenarios()...)
	env, envErrs := p.expandEnv(lookup) // -e values (correlate.go)
	p.envx = env
	errs = append(errs, envErrs...)
	if len(opErrs) == 0 && len(envErrs) == 0 {
		args, argErrs := p.compileArgs(ops) // templates and data files (args.go)
		r.Args = args
		errs = append(errs, argErrs...)
		errs = append(errs, p.validateRefs(args)...) // {{step}} (correlate.go)
	}
	return r, errs
}

// tooManyOps is the problem of a profile of n > MaxProfileOps ops.
func tooManyOps(n int) error {
	return fmt.Errorf("ops: %d, more than a profile may have (%d, profile.MaxProfileOps): each op is a label of its own, "+
		"with its own histograms (memory) and a row in every report; give per-request values in a data file "+
		"(data:, see {{.column}}) or templates ({{rand_int 1 100}}, {{seq}}) rather than an op each, or split the test into several profiles", n, MaxProfileOps)
}

// problems collects a validation's errors.
type problems []error

func (e *problems) add(format string, args ...any) {
	*e = append(*e, AsSetting(fmt.Errorf(format, args...)))
}

// validateLoad checks the load model: protocol, VUs, rate, stages.
func (p *Profile) validateLoad() []error {
	var errs problems
	if p.Protocol != "" && p.Protocol != driver.ProtocolAuto && !slices.Contains(driver.SupportedProtocols, p.Protocol) {
		errs.add("protocol: %q not supported (want auto or one of %s)", p.Protocol, strings.Join(driver.SupportedProtocols, ", "))
	}
	if p.VUs < 1 {
		errs.add("vus: %d, want at least 1", p.VUs)
	}
	if p.Concurrency < 1 || p.Concurrency > MaxConcurrency {
		errs.add("concurrency: %d, want 1 … %d requests in flight per session", p.Concurrency, MaxConcurrency)
	}
	switch p.Model {
	case "", "open", "closed":
	default:
		errs.add("model: %q, want open or closed", p.Model)
	}
	if p.Rate < 0 {
		errs.add("rate: %g, want > 0 (open model) or 0 (closed model)", p.Rate)
	}
	if p.Model == "open" && p.Rate == 0 && len(p.Stages) == 0 {
		errs.add("rate: the open model needs a rate (or stages)")
	}
	if p.Open() && p.MaxVUs < p.VUs {
		errs.add("max_vus: %d is below vus (%d)", p.MaxVUs, p.VUs)
	}
	for i, s := range p.Stages {
		if s.Duration <= 0 {
			errs.add("stages[%d].duration: %v, want > 0", i, s.Duration.D())
		}
		if s.Target < 0 {
			errs.add("stages[%d].target: %g, want ≥ 0", i, s.Target)
		}
	}
	if len(p.Stages) > 0 && p.Duration != 0 {
		errs.add("duration: the stages set the measured window (their total, %v): leave duration out", p.Window())
	}
	if len(p.Stages) == 0 && p.Duration.D() <= 0 {
		errs.add("duration: %v, want > 0", p.Duration.D())
	}
	return errs
}

// validateTimes checks durations and the resume policy.
func (p *Profile) validateTimes() []error {
	var errs problems
	for name, d := range map[string]Duration{"warmup": p.Warmup, "graceful_stop": p.GracefulStop, "think_time": p.ThinkTime,
		"max_delay": p.MaxDelay, "timeouts.connect": p.Timeouts.Connect, "timeouts.request": p.Timeouts.Request, "timeouts.stream_idle": p.Timeouts.StreamIdle,
		"resume.default_retry": p.Resume.DefaultRetry} {
		if d < 0 {
			errs.add("%s: %v, want ≥ 0", name, d.D())
		}
	}
	switch p.Resume.Policy {
	case "", driver.ReconnectHonourRetry, driver.ReconnectImmediate, driver.ReconnectBackoff:
	default:
		errs.add("resume.policy: %q, want honour-retry, immediate or backoff", p.Resume.Policy)
	}
	return errs
}

// validateSections checks chaos, sweep, soak, thresholds, churn, limits,
// the embedded server and headers.
func (p *Profile) validateSections() []error {
	var errs problems
	if p.Chaos != nil {
		errs = append(errs, p.Chaos.Validate("chaos")...)
	}
	if p.Sweep != nil {
		sw := *p.Sweep
		sw.Defaults()
		errs = append(errs, sw.Validate()...)
	}
	if p.Soak != nil && p.Soak.Checkpoint < 0 {
		errs.add("soak.checkpoint: want ≥ 0")
	}
	for i, t := range p.Thresholds {
		if _, err := verdict.ParseThreshold(t); err != nil {
			errs.add("%s: %v", p.ThresholdField(i), err)
		}
	}
	errs = append(errs, p.validateAborts()...)
	if p.Churn.Rate < 0 {
		errs.add("churn.rate: %g, want ≥ 0", p.Churn.Rate)
	}
	for name, v := range map[string]units.Size{"max_message_bytes": p.MaxMessageBytes, "max_event_bytes": p.MaxEventBytes, "max_buffered_bytes": p.MaxBufferedBytes} {
		if v != 0 && v < 1024 {
			errs.add("%s: %v, want at least 1KiB (0: the default)", name, v)
		}
	}
	if p.MaxEventBytes > 1<<30 {
		errs.add("max_event_bytes: %v, want at most 1GiB", p.MaxEventBytes)
	}
	if p.Server.GETRetry < 0 || p.Server.Tick < 0 {
		errs.add("server: get_retry and tick must be ≥ 0")
	}
	if p.Server.PageSize < 0 {
		errs.add("server.page_size: %d, want ≥ 0 (0: the SDK's 1000)", p.Server.PageSize)
	}
	switch p.Server.Mode {
	case "", "stateful", "stateless", "json", "2026-07-28":
	default:
		errs.add("server.mode: %q, want stateful, stateless, json or 2026-07-28", p.Server.Mode)
	}
	for k := range p.Headers {
		if _, _, err := driver.ParseHeader(k + ": x"); err != nil {
			errs.add("headers: %q is not a header name", k)
		}
	}
	return errs
}

// validateOps checks the op mix.
func (p *Profile) validateOps() []error {
	var errs problems
	if len(p.Ops) == 0 {
		errs.add("ops: empty, want at least one operation")
	}
	total := 0
	for i, o := range p.Ops {
		f := fmt.Sprintf("ops[%d]", i)
		if o.Name != "" {
			f = fmt.Sprintf("ops[%d] (%s)", i, o.Name)
		}
		if !slices.Contains(Methods, o.Method) {
			errs.add("%s.method: %q, want one of %s", f, o.Method, strings.Join(Methods, ", "))
		}
		if need := map[string]string{"tools/call": o.Tool, "prompts/get": o.Prompt, "resources/read": o.URI}; need[o.Method] == "" {
			if field, ok := map[string]string{"tools/call": "tool", "prompts/get": "prompt", "resources/read": "uri"}[o.Method]; ok {
				errs.add("%s.%s: required for %s", f, field, o.Method)
			}
		}
		if o.Method != "tools/call" && o.Method != "prompts/get" && o.Method != "completion/complete" && len(o.Arguments) > 0 {
			errs.add("%s.arguments: only tools/call, prompts/get and completion/complete take arguments", f)
		}
		errs = append(errs, o.validateMore(f)...)
		if o.Weight != nil {
			if *o.Weight < 0 {
				errs.add("%s.weight: %d, want ≥ 0", f, *o.Weight)
			} else {
				total += *o.Weight
			}
		}
		if o.Expect.Progress < 0 {
			errs.add("%s.expect.progress: %d, want ≥ 0", f, o.Expect.Progress)
		}
	}
	// Every op's label names its row, its intervals.csv columns and its
	// Prometheus series, and scenarios pick ops by it: two ops with one
	// label would read as one op. Refused, naming both.
	seen := map[string]int{}
	for i := range p.Ops {
		n := p.Ops[i].OpName()
		if j, dup := seen[n]; dup {
			errs.add("ops[%d].name: %q is also the label of ops[%d]: give each op a name of its own (name: ...)", i, n, j)
			continue
		}
		seen[n] = i
	}
	if len(p.Ops) > 0 && total == 0 && len(p.parseErrs) == 0 && !p.HasScenarios() { // a weight that failed to parse reads 0
		errs.add("ops: all weights are 0")
	}
	return errs
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
		case strings.HasPrefix(want, "map"), strings.HasPrefix(want, "profile."):
			want = "a mapping"
		}
		return fmt.Sprintf("line %s: %q is not %s", s[1], s[3], want)
	}
	return m
}

// ThresholdField names threshold i in an error: thresholds[i] of the
// profile, or the setting thresholds (a *SettingError: the CLI's
// --threshold) for one given on the command line.
func (p *Profile) ThresholdField(i int) string {
	if i >= len(p.Thresholds)-p.ThresholdFlags {
		return "{thresholds}"
	}
	return fmt.Sprintf("thresholds[%d]", i)
}
