package launch

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/verdict"
	"github.com/mcpbench/mcpbench/workload"
)

// Run runs the test ('mcpbench run'): as Spec.Processes child processes,
// or in this process (the whole test, or its Spec.Segment), prints the
// summary as Spec.Format says and returns the outcome: nil (exit 0), or
// an error carrying its exit code — ExitFailed the run could not start
// or no operation succeeded, ExitThresholds a threshold crossed (or
// --abort-on-fail), ExitInterrupted stopped by a signal, ExitResultsLost
// results not written, ExitUsage a bad segment or start.
func (e *Test) Run() error {
	if e.spec.child != nil && e.spec.child.Kind == childSweepStep {
		return e.runSweepStepChild()
	}
	if e.spec.Processes > 1 {
		return e.runProcesses()
	}
	plan, r, opts, err := e.segmentRun()
	if err != nil {
		return err
	}
	seg := opts.Segment
	opts.Sinks = append(e.junitSinks("run"), opts.Sinks...) // before the results directory: written when summary.json is
	e.shareProcs(seg)
	sum, runErr := workload.Run(interruptible(e.ctx), plan, opts)
	e.writeJUnit(verdict.JUnitRun("run", sum, runErr))
	if sum == nil {
		e.writeStatus(runErr)
		return WithExitCode(ExitFailed, runErr)
	}
	r.settle(runErr)
	e.writeStatus(runErr)
	if err := e.print(sum); err != nil && !sum.Interrupted {
		return e.printFailed(err) // interrupted (SIGHUP: the terminal is gone), the exit says so: the results are in their directory
	}
	r.close()
	if !seg.Whole() {
		return e.resultsExit(segmentExit(e.stderr, sum, runErr))
	}
	return e.resultsExit(exitFor(sum, runErr))
}

// exitFor maps a run's outcome to the exit code: 1 the run could not
// start, 130 interrupted, 99 a threshold crossed, 1 no operation
// succeeded.
func exitFor(sum *results.Summary, runErr error) error {
	switch {
	case errors.Is(runErr, workload.ErrInterrupted):
		return WithExitCode(ExitInterrupted, errors.New(sum.StopReason))
	case runErr != nil:
		return WithExitCode(ExitFailed, runErr)
	case sum.Interrupted:
		return WithExitCode(ExitInterrupted, errors.New("interrupted: "+sum.StopReason))
	case sum.Aborted:
		return WithExitCode(ExitThresholds, errors.New(sum.StopReason))
	case results.ThresholdsFailed(sum.Thresholds) > 0:
		var crossed []string
		for _, t := range sum.Thresholds {
			if !t.Pass {
				crossed = append(crossed, t.Expr)
			}
		}
		return WithExitCode(ExitThresholds, fmt.Errorf("thresholds crossed: %s", strings.Join(crossed, ", ")))
	case sum.All.Count == 0:
		return WithExitCode(ExitFailed, errors.New("no operation completed"))
	case sum.All.Errors == sum.All.Count:
		return WithExitCode(ExitFailed, fmt.Errorf("every operation failed (%d)", sum.All.Count))
	}
	return nil
}

// interruptible renders a signal as the run's stop reason.
func interruptible(ctx context.Context) context.Context {
	out, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	context.AfterFunc(ctx, func() { cancel(errors.New("interrupted by signal")) })
	return out
}

// WriteJSON writes v as indented JSON and a newline (the summaries'
// --format json).
func WriteJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

func writeJSON(w io.Writer, v any) error { return WriteJSON(w, v) }

// runInfo is run.json's description of the run of plan: the command
// line and flags of spec (redacted here), the profile without header
// values and with the proxy's credentials redacted.
func runInfo(plan *workload.Plan, spec *Spec, embedded bool, started time.Time) *results.RunInfo {
	info := &results.RunInfo{
		Tool: "mcpbench", Version: spec.Version, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		NumCPU: runtime.NumCPU(), Started: started, Command: RedactArgs(spec.Argv),
		Target: plan.Target, Embedded: embedded,
		ProtocolRequested: cmp.Or(plan.Profile.Protocol, driver.ProtocolAuto),
		Profile:           plan.Profile.Name,
		Flags:             map[string]string{},
		Headers:           plan.ShownHeader(),
		Seed:              plan.Profile.Seed,
	}
	if embedded {
		info.SDK = spec.SDK
		info.ServerMode = cmp.Or(plan.Profile.Server.Mode, "stateful")
	}
	p := plan.Profile
	p.Headers = nil // values may be secrets; Headers above are redacted
	p.Proxy = secret.RedactURL(p.Proxy)
	info.Spec = p
	for name, v := range spec.Flags {
		info.Flags[name] = redactFlag(plan, name, v)
	}
	return info
}

// redactFlag is flag name's value v as run.json shows it.
func redactFlag(plan *workload.Plan, name, v string) string {
	switch name {
	case "header":
		return strings.Join(plan.ShownHeader(), "; ")
	case "url": // as written, without credentials; several: "; "
		var urls []string
		for _, u := range strings.Split(v, "; ") {
			urls = append(urls, secret.RedactURL(u))
		}
		return strings.Join(urls, "; ")
	case "proxy", "prometheus-rw":
		return secret.RedactURL(v) // as written, without credentials (?api_key=…)
	case "oauth-client-secret":
		return "[redacted]"
	}
	return v
}

// RedactArgs hides the values of --header/-H and --oauth-client-secret
// arguments and the credentials of URLs (secret.RedactURL).
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		switch {
		case a == "--oauth-client-secret":
			if i+1 < len(out) {
				out[i+1] = "[redacted]"
				i++
			}
		case strings.HasPrefix(a, "--oauth-client-secret="):
			out[i] = "--oauth-client-secret=[redacted]"
		case a == "--header" || a == "-H":
			if i+1 < len(out) {
				out[i+1] = redactHeaderArg(out[i+1])
				i++
			}
		case strings.HasPrefix(a, "--header="):
			out[i] = "--header=" + redactHeaderArg(strings.TrimPrefix(a, "--header="))
		case strings.HasPrefix(a, "-H") && len(a) > 2:
			out[i] = "-H" + redactHeaderArg(a[2:])
		case strings.Contains(a, "://"): // --url URL, --url=URL
			out[i] = secret.RedactURL(a)
		}
	}
	return out
}

func redactHeaderArg(h string) string {
	name, _, ok := strings.Cut(h, ":")
	if !ok {
		return "[redacted]"
	}
	return strings.TrimSpace(name) + ": [redacted]"
}

// safeName keeps a profile name usable in a directory name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
