package main

import (
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/internal/units"
	"github.com/mcpbench/mcpbench/launch"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/profiles"
	"github.com/mcpbench/mcpbench/verdict"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runFlags are the flags of `mcpbench run`; each overrides the profile
// field of the same meaning when given.
type runFlags struct {
	profile, protocol, out, serverMode, reconnect      string
	urls                                               []string
	sourceAddrs                                        string
	vus, maxVUs, maxResumes, procs, targetPID          int
	concurrency, iterations                            int
	rate                                               float64
	duration, warmup, graceful, think, maxDelay        time.Duration
	timeout, connectTimeout, idleTimeout, retryDefault time.Duration
	getStream, insecure, reissue, quiet, jsonOut       bool
	noResults, noProgress                              bool
	overwrite                                          bool
	format                                             string // --format: text, json or markdown (format.go)
	dryRun                                             bool   // --dry-run: print the compiled plan, send nothing (dryrun.go)
	cpuProfile, tool, toolArgs                         string
	toolProgress                                       bool
	cancel                                             string
	pageSize                                           int
	headers, chaosSpecs, thresholds, stages, checks    []string
	envs                                               []string // -e KEY=VALUE (applyFlags)
	abortOnFail                                        bool     // --abort-on-fail (applyFlags)
	abortDelay                                         time.Duration
	storm                                              string
	chaosSeed                                          int64
	churnRate                                          float64
	checkDeleted                                       bool
	getRetry, tick                                     time.Duration
	seed                                               int64
	maxMessage, maxEvent, maxBuffered                  units.Size
	followRedirects                                    bool
	net                                                netFlags
	scale                                              scaleFlags // run only: segments, --start-at, --processes (scale.go)
	live                                               launch.LiveSpec
	launchFile                                         string // --launch-file: a child of --processes (launch.Spec.LoadChild)
}

func newRunCmd() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a benchmark (against the embedded reference server unless --url is given)",
		Long: `run drives MCP sessions against a server and prints per-op throughput, errors by
class and latency percentiles (p50 p90 p99 p99.9 max).

Closed model (--vus N): N VUs, each owning one session, send ops back to back.
Open model (--rate R): ops arrive at R per second whatever the server does;
response time is measured from each op's intended start (coordinated omission
corrected) and service time from the actual send. An op that finds no free VU
starts a new one (up to --max-vus); one that cannot start within --max-delay
of its intended start is dropped and counted, and reported with its lower
bound (how late it was) in a latency table of its own. --max-vus defaults to
rate × max-delay (Little's law: the VUs needed to keep the rate while each op
takes up to the max delay; slower ops would be dropped anyway), at least --vus,
at most 5000; more than 1 % dropped is a warning that names the cause.

Timeouts: --timeout bounds each request until its answer begins (the response
headers of a stream: a POST answered with SSE, a GET stream, a resume) or
ends (a JSON answer). An open stream is bounded only by --stream-idle-timeout
(response streams; a silent GET stream is normal) and the run's end, so a
tool that streams progress for longer than --timeout is not cut.

The workload comes from a profile (--profile NAME|FILE; built-ins: ` + strings.Join(profiles.Names(), ", ") + `);
flags override its fields. Without --url the embedded reference server is
started on a free loopback port.

Secrets: ${NAME} (upper case) in --url, --header values and the profile's url,
headers and ops is read from the environment when the run starts (unset: exit
2), so 'Authorization: Bearer ${TOKEN}' works in single quotes; $${ writes a
literal ${, and lower-case ${request} is the per-request placeholder.
user:password@ in the URL is sent as Authorization: Basic (an explicit
Authorization header wins). Credentials are redacted in every output.

Thresholds (--threshold '[SCOPE:]METRIC CMP VALUE[UNIT]', e.g. 'p(95)<200ms',
'tools/call:p99<1s', 'error_rate<1%', 'get:lost==0', 'deleted-session-accepted==0')
read exactly the numbers the summary prints. SCOPE is an op (tools/call:echo,
or a method: every op of it), post: (response streams), get: (GET streams) or
sessions:; without it, the total. Metrics:
  ` + strings.Join(verdict.MetricNames(), "\n  ") + `

Exit codes: 0 done; 1 the run could not start or no operation succeeded;
2 bad flags or profile (an unknown threshold metric lists the valid ones);
99 a threshold was crossed; 130 interrupted (results so far are still printed
and written; a second Ctrl-C stops at once, keeping what was written).`,
		Example: `  mcpbench run                                        # smoke profile, embedded server
  mcpbench run --profile tools-mix --out results/mix  # keep summary.json and run.json
  mcpbench run --url http://127.0.0.1:8080/mcp --vus 64 --duration 10s
  mcpbench run --url https://mcp.example.com/mcp --header 'Authorization: Bearer ${TOKEN}'  # ${TOKEN} from the environment
  mcpbench run --rate 1000 --duration 20s --max-vus 200   # open model
  mcpbench run --profile my-workload.yaml --seed 7
  mcpbench run --tool slow --args '{"ms":50}' --rate 100      # one tool, open model
  mcpbench run --profile resume-chaos --rate 500 --dry-run    # the compiled plan; nothing sent
  mcpbench run --format markdown > run.md                     # or --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchmark(cmd, f)
		},
	}
	f.register(cmd)
	f.scale.registerScale(cmd)
	return cmd
}

// register defines the flags shared by run, soak and sweep.
func (f *runFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.urls, "url", nil, "MCP endpoint to benchmark (default: the embedded reference server); user:password@ is sent as Basic auth, ${NAME} is read from the environment; repeat it to spread sessions over several endpoints (replicas), results per endpoint and in total")
	fl.StringVar(&f.sourceAddrs, "source-addr", "", "local addresses to connect from, round robin per connection: 127.0.0.2,127.0.0.3, a range 127.0.0.2-127.0.0.9 or a CIDR 127.0.0.0/28 (past ~64k connections to one server address)")
	fl.StringVarP(&f.profile, "profile", "p", "smoke", "built-in profile name or YAML file")
	fl.StringVar(&f.protocol, "protocol", "", "auto (default: server/discover, else initialize), 2026-07-28, 2025-11-25, 2025-06-18 or 2025-03-26")
	fl.IntVar(&f.vus, "vus", 0, "closed model: VUs; open model: VUs started up front")
	fl.IntVar(&f.maxVUs, "max-vus", 0, "open model: cap on VUs (default: rate × --max-delay, at least --vus, at most 5000)")
	fl.IntVar(&f.concurrency, "concurrency", 0, "requests in flight per session (default 1): each VU runs this many at once")
	fl.Float64Var(&f.rate, "rate", 0, "open model: arrival rate in ops/s (0: closed model)")
	fl.DurationVar(&f.maxDelay, "max-delay", 0, "open model: drop an op that cannot start this long after its intended start (default 1s)")
	fl.IntVar(&f.iterations, "iterations", 0, "closed model: N iterations (ops, or scenario iterations) shared by the VUs in the measured window, then stop (k6's shared-iterations); --duration caps it (default 10m); --processes split N exactly")
	fl.DurationVarP(&f.duration, "duration", "d", 0, "measured window (a profile with stages: their total; use --stage)")
	fl.StringArrayVarP(&f.stages, "stage", "s", nil, "ramp stage DURATION:TARGET (repeatable; replaces the profile's stages; the target is ops/s in the open model, VUs in the closed), e.g. -s 10s:500 -s 10s:2000")
	fl.DurationVar(&f.warmup, "warmup", 0, "warm-up before the measured window (results discarded)")
	fl.DurationVar(&f.graceful, "graceful-stop", 0, "time in-flight ops get to finish after the window (default 5s)")
	fl.DurationVar(&f.think, "think-time", 0, "closed model: pause between a VU's ops")
	fl.BoolVar(&f.getStream, "get-stream", false, "open a standalone GET stream per session")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "extra request header 'Name: value' (repeatable; ${NAME} in the value is read from the environment; values of auth headers are redacted in output)")
	fl.DurationVar(&f.timeout, "timeout", 0, "request timeout per op, resumes included (default 30s)")
	fl.DurationVar(&f.connectTimeout, "connect-timeout", 0, "TCP/TLS connect timeout (default 5s)")
	fl.DurationVar(&f.idleTimeout, "stream-idle-timeout", 0, "a response stream that completes no SSE event (or keep-alive) for this long counts as broken; bytes of an unfinished event do not count (default 30s)")
	fl.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification")
	fl.StringVar(&f.reconnect, "reconnect", "", "resume policy: honour-retry (default), immediate, backoff")
	fl.DurationVar(&f.retryDefault, "retry-default", 0, "wait before resuming when the server sent no retry hint (default 1s)")
	fl.IntVar(&f.maxResumes, "max-resumes", 0, "resume attempts without progress per stream (default 5; -1 disables)")
	fl.BoolVar(&f.reissue, "reissue", false, "re-send a request whose stream broke before any event id")
	fl.Int64Var(&f.seed, "seed", 0, "seed for op choice and jitter (default: the profile's, or 1)")
	fl.StringVar(&f.tool, "tool", "", "benchmark one tool: replaces the profile's op mix with tools/call NAME")
	fl.StringVar(&f.toolArgs, "args", "", "JSON arguments for --tool, e.g. '{\"ms\":50}'")
	fl.BoolVar(&f.toolProgress, "progress-token", false, "with --tool: attach a progressToken so the server may stream progress")
	fl.StringVar(&f.cancel, "cancel", "", "with --tool: cancel a share of the calls still in flight after a while (notifications/cancelled), e.g. 'after=50ms p=0.1'")
	fl.StringArrayVar(&f.chaosSpecs, "chaos", nil, "add a fault (repeatable): 'cut after_events=2 close=rst target=post p=1', 'cut mid_event=1', 'cut before_first_event', 'cut between=100ms-2s', 'stall after_events=1 stall=2s', 'delay delay=50ms p=0.1'")
	fl.StringVar(&f.storm, "storm", "", "cut every open stream at a time: 'at=10s every=0 close=rst target=get'")
	fl.Int64Var(&f.chaosSeed, "chaos-seed", 0, "seed of the fault schedule (default: --seed)")
	fl.StringArrayVar(&f.checks, "check", nil, `check on every result (repeatable): 'PATH OP VALUE' with a gjson PATH on the result (structured.X, is_error aliases) and OP one of == != < <= > >= ~ (regex), or output_schema; for some ops only: 'OP => CHECK' (an op name, method or scenario), e.g. 'tools/call:echo => content.0.text == "hello"'; counted per check, thresholdable: checks>0.99`)
	fl.BoolVar(&f.abortOnFail, "abort-on-fail", false, "stop the run as soon as a threshold is crossed, judged at the end of each interval on the measured window so far (k6's abortOnFail): exit 99, results written, the summary says when and why")
	fl.DurationVar(&f.abortDelay, "abort-delay", 0, "with --abort-on-fail: judge only from this far into the measured window on (k6's delayAbortEval)")
	fl.StringArrayVarP(&f.envs, "env", "e", nil, "value for templates, {{env \"KEY\"}} (repeatable), like k6's __ENV: -e KEY=VALUE; for a secret pass -e KEY='${NAME}' (read from the environment, never shown)")
	fl.StringArrayVar(&f.thresholds, "threshold", nil, "pass/fail criterion checked at the end (repeatable), e.g. 'tools/call:p99<200ms', 'p(95)<150', 'error_rate<1%', 'get:lost==0'; metrics in the help above; a crossed one exits 99")
	fl.Var(&f.maxMessage, "max-message-bytes", "largest JSON answer read; a larger one fails naming the limit")
	fl.Lookup("max-message-bytes").DefValue = units.Size(launch.DefaultMaxMessageBytes).String() // the flag's zero means: not given
	fl.Var(&f.maxEvent, "max-event-bytes", "largest SSE event read")
	fl.Lookup("max-event-bytes").DefValue = units.Size(launch.DefaultMaxEventBytes).String()
	fl.Var(&f.maxBuffered, "max-buffered-bytes", "memory all sessions together may hold for large messages (default: twice the larger of the two limits); a large message waits for room")
	fl.Lookup("max-buffered-bytes").DefValue = "" // no fixed default: pflag prints none
	fl.BoolVar(&f.followRedirects, "follow-redirects", false, "follow 307/308 answers to the same origin (counted); other redirects are errors showing their Location")
	fl.Float64Var(&f.churnRate, "churn-rate", 0, "replace sessions at this rate (sessions/s) while the run goes")
	fl.BoolVar(&f.checkDeleted, "check-deleted", false, "after each DELETE check that the server answers 404 to the deleted session")
	fl.DurationVar(&f.getRetry, "server-get-retry", 0, "embedded server: retry hint sent on GET streams")
	fl.DurationVar(&f.tick, "server-tick", 0, "embedded server: numbered notification on every GET stream this often")
	fl.IntVar(&f.pageSize, "server-page-size", 0, "embedded server: at most this many items per page of tools/list and the other lists (0: 1000)")
	fl.StringVarP(&f.out, "out", "o", "", "results directory (default results/<time>-<profile>): run.json, intervals.csv, histograms.hlog, offenders.json, summary.json")
	fl.BoolVar(&f.noResults, "no-results", false, "write no results directory")
	fl.BoolVar(&f.overwrite, "overwrite", false, "replace a non-empty --out that mcpbench wrote (its run.json says so) before the run, removing only its files; a directory holding anything else is refused (without it, a non-empty --out is refused: results are never overwritten)")
	fl.StringVar(&f.serverMode, "server-mode", "", "embedded server mode: stateful (default), stateless, json, 2026-07-28")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "progress as one plain line every 5 s, even on a terminal")
	fl.BoolVar(&f.noProgress, "no-progress", false, "no progress output at all")
	addFormat(fl, &f.format, &f.jsonOut, "text", "json", "markdown")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the compiled plan (model, load, ops, chaos, thresholds) and exit without sending anything")
	fl.IntVar(&f.targetPID, "target-pid", 0, "the target server's process id (same host, Linux): sample its CPU, RSS, open files and threads each interval")
	fl.IntVar(&f.procs, "procs", 0, "OS threads running Go code in mcpbench (GOMAXPROCS). 0: auto — all cores, but for an open-model rate against --url only as many as the rate needs (~3300 ops/s each), which costs less CPU per op")
	f.net.register(fl)
	registerLive(fl, &f.live)
	fl.StringVar(&f.launchFile, launch.ChildFileFlag, "", "the launch file of a child of --processes (how mcpbench starts its children; never typed)")
	fl.MarkHidden(launch.ChildFileFlag)
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a Go CPU profile of mcpbench itself to this file")
	fl.MarkHidden("cpuprofile")
	cmd.RegisterFlagCompletionFunc("profile", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return profiles.Names(), cobra.ShellCompDirectiveDefault
	})
}

func runBenchmark(cmd *cobra.Command, f *runFlags) error {
	if err := f.scale.check(cmd.Flags().Changed); err != nil {
		return usageError("%v", err)
	}
	return runTest(cmd, f, nil, (*launch.Test).Run)
}

// runTest is run, sweep and soak: the flags (and mod, a command's own)
// settled into a launch.Spec, printed by --dry-run, or prepared and run
// by do.
func runTest(cmd *cobra.Command, f *runFlags, mod func(*profile.Profile) error, do func(*launch.Test) error) error {
	return runTestWith(cmd, f, mod, nil, do)
}

// runTestWith is runTest with set, the command's own settings of the
// spec (nil: none).
func runTestWith(cmd *cobra.Command, f *runFlags, mod func(*profile.Profile) error, set func(*launch.Spec), do func(*launch.Test) error) error {
	spec, err := f.spec(cmd, mod)
	if err != nil {
		return err
	}
	if set != nil {
		set(&spec)
	}
	if f.dryRun {
		return launch.DryRun(spec)
	}
	ctx, stopNow, stop := watchSignals(cmd.Context())
	defer stop()
	spec.StopNow, spec.Exit = stopNow, hardExit
	t, err := launch.Prepare(ctx, spec)
	if err != nil {
		return err
	}
	defer t.Close()
	return do(t)
}

// spec settles the flags of cmd (run, sweep, soak) into a launch.Spec:
// the profile loaded and the flags applied (mod: the command's own), or,
// in a child of --processes, the profile its parent resolved (its launch
// file) and the child's own flags.
func (f *runFlags) spec(cmd *cobra.Command, mod func(*profile.Profile) error) (launch.Spec, error) {
	fl := cmd.Flags()
	format := f.format
	if f.jsonOut {
		format = "json"
	}
	ver, sdk := version()
	s := launch.Spec{
		Command: cmd.Name(), Out: f.out, NoResults: f.noResults, Overwrite: f.overwrite,
		Segment: f.scale.segment, SegmentSequence: f.scale.sequence, StartAt: f.scale.startAt,
		Processes: f.scale.processes, StartDelay: f.scale.startDelay,
		Procs: f.procs, TargetPID: f.targetPID, CPUProfile: f.cpuProfile,
		Quiet: f.quiet, NoProgress: f.noProgress, Format: format, Live: f.live,
		Argv: argvOf(cmd.Context()), Flags: givenFlags(fl, f), Version: ver, SDK: sdk,
		Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr(), Invocation: invokedAs(cmd.Context()),
	}
	if f.launchFile != "" {
		return s, s.LoadChild(f.launchFile)
	}
	p, err := loadProfile(cmd, f, mod)
	if err != nil {
		return s, err
	}
	s.Profile = p
	return s, nil
}

// givenFlags are the flags given, as launch.Spec.Flags takes them (run.json
// redacts them): --url's values joined by "; ".
func givenFlags(fl *pflag.FlagSet, f *runFlags) map[string]string {
	out := map[string]string{}
	fl.Visit(func(x *pflag.Flag) {
		v := x.Value.String()
		if x.Name == "url" {
			v = strings.Join(f.urls, "; ")
		}
		out[x.Name] = v
	})
	return out
}

// loadProfile loads f's profile and applies the flags (and mod, for a
// command's own flags); errors exit 2.
func loadProfile(cmd *cobra.Command, f *runFlags, mod func(*profile.Profile) error) (*profile.Profile, error) {
	p, err := profile.LoadProfile(f.profile)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	if err := applyFlags(p, f, cmd.Flags()); err != nil {
		return nil, usageError("%v", err)
	}
	if mod != nil {
		if err := mod(p); err != nil {
			return nil, usageError("%v", err)
		}
	}
	return p, nil
}
