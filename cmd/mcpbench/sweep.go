package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/launch"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// sweepFlags are sweep's own flags (the rest are run's).
type sweepFlags struct {
	by                     string
	from, to, sloErr       float64
	steps, repeat          int
	step, stepWarm, sloP99 time.Duration
	keepGoing              bool
}

func newSweepCmd() *cobra.Command {
	f := &runFlags{}
	sf := &sweepFlags{}
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Step the load up to the capacity knee and find the maximum sustainable rate under an SLO",
		Long: `sweep steps the load from --from to --to in --steps equal steps of --step each
(after a warm-up per step) and judges each step against the SLO: response-time
p99, error rate, and a clean replay ledger. It stops once a step is clearly
past the knee. Each step's p99 and error rate come with a 95 % confidence
interval (block bootstrap over its one-second intervals); --repeat K runs
each step K times and pools them. The verdict gives the maximum sustainable
rate under the SLO (and the load where the SLO is crossed, interpolated,
with its interval), the knee where p99 reaches twice its low-load baseline
(with its interval; never above the highest load under the SLO), and how
sure it is (marginal when the SLO lies inside a deciding step's interval). With --target-pid it also gives the target's
CPU and memory per step; a session sweep gives memory per session.

--by rate steps the arrival rate (ops/s); --by vus the closed-model VUs;
--by sessions the concurrent sessions, each holding a GET stream.

Each step is a full results directory (step-01 …) under --out, with sweep.json
and sweep.csv beside them; "mcpbench plot DIR" draws the capacity charts.
Ctrl-C keeps every finished step.

--processes N runs each step as N child processes of mcpbench (segments
0/N … N-1/N of the step, each with its own open-file limit and GC, writing
step-NN/segment-I), shows one merged progress line, and merges them exactly
into step-NN, from which the step is judged as an in-process step is; a
sessions sweep's memory per session is then that of the children's summed
memory. Ctrl-C is forwarded to each child; the finished steps are kept.`,
		Example: `  mcpbench sweep --profile capacity-sweep                       # embedded server
  mcpbench serve --addr 127.0.0.1:8080 --pid-file /tmp/mcpbench-serve.pid &
  mcpbench sweep --profile capacity-sweep --url http://127.0.0.1:8080/mcp --target-pid "$(cat /tmp/mcpbench-serve.pid)"
  mcpbench sweep --by sessions --from 1000 --to 5000 --steps 5 --rate 100 --step 10s
  mcpbench sweep --profile capacity-sweep --repeat 3                # each step 3 times: tighter intervals
  mcpbench sweep --profile capacity-sweep --dry-run                 # each step's plan; nothing sent
  mcpbench sweep --by sessions --from 20000 --to 60000 --steps 5 --rate 500 --processes 4 --url http://127.0.0.1:8080/mcp`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSweep(cmd, f, sf)
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	for _, name := range []string{"duration", "warmup", "threshold", "no-results"} {
		fl.MarkHidden(name)
	}
	fl.Lookup("out").Usage = "results directory (default results/<time>-<profile>): sweep.json, sweep.csv and each step's run files in step-NN/"
	sf.register(fl)
	f.scale.registerScale(cmd)
	fl.Lookup("processes").Usage = "run each step as N child processes of mcpbench (segments 0/N … N−1/N of the step, each with its own open-file limit and GC), show one merged progress line, and merge each step exactly into step-NN (each child in step-NN/segment-I)"
	fl.Lookup("start-delay").Usage = "with --processes: start each step's clock this long after its children are launched, for their set-up (default 5s + 1ms per session of a child)"
	for _, name := range []string{"segment", "segment-sequence", "start-at"} {
		fl.MarkHidden(name) // set by --processes for its children
	}
	return cmd
}

// register defines the flags of the sweep section (profileFlags).
func (sf *sweepFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&sf.by, "by", "", "what to step: rate (default), vus or sessions")
	fl.Float64Var(&sf.from, "from", 0, "first step's load")
	fl.Float64Var(&sf.to, "to", 0, "last step's load")
	fl.IntVar(&sf.steps, "steps", 0, "number of steps (≥ 2)")
	fl.DurationVar(&sf.step, "step", 0, "measured time per step (default 15s)")
	fl.DurationVar(&sf.stepWarm, "step-warmup", 0, "warm-up before each step (default 3s)")
	fl.DurationVar(&sf.sloP99, "slo-p99", 0, "SLO: response-time p99 at most (default 50ms)")
	fl.Float64Var(&sf.sloErr, "slo-errors", 0, "SLO: error rate at most, % (default 1)")
	fl.BoolVar(&sf.keepGoing, "keep-going", false, "run every step, even past the knee")
	fl.IntVar(&sf.repeat, "repeat", 0, "run each step K times and pool them (default 1): run-to-run noise enters the confidence intervals")
}

// runSweep runs sweep: the profile's sweep section with the flags
// applied, each step recorded in its own results directory.
func runSweep(cmd *cobra.Command, f *runFlags, sf *sweepFlags) error {
	set := cmd.Flags().Changed
	for name, use := range map[string]string{
		"duration":   "--step (measured time per step)",
		"warmup":     "--step-warmup",
		"threshold":  "--slo-p99 and --slo-errors (each step is judged against the SLO)",
		"no-results": "--out (a sweep keeps every step's results)",
	} {
		if set(name) {
			return usageError("--%s does not apply to sweep: use %s", name, use)
		}
	}
	if err := checkSweepScale(f, set); err != nil {
		return usageError("%v", err)
	}
	return runTest(cmd, f, func(p *profile.Profile) error { return sf.apply(p, set) }, (*launch.Test).Sweep)
}

// checkSweepScale refuses the scale flags sweep does not take: a child's
// segment and start go with --sweep-step, which does not go with
// --processes.
func checkSweepScale(f *runFlags, set func(string) bool) error {
	if err := f.scale.check(set); err != nil {
		return err
	}
	for _, name := range []string{"segment", "segment-sequence", "start-at"} {
		if set(name) && !set(launch.ChildFileFlag) {
			return fmt.Errorf("--%s goes with a child of --processes; use --processes N to run each step as N processes", name)
		}
	}
	return nil
}

// apply sets the profile's sweep section from the flags that were given.
func (sf *sweepFlags) apply(p *profile.Profile, set func(string) bool) error {
	if p.Sweep == nil {
		if err := needSweepFlags(p.Name, set); err != nil {
			return err
		}
		p.Sweep = &profile.SweepSpec{}
	}
	return p.Override(given(sf.profileFlags(), set)...)
}

// profileFlags are the sweep flags, each setting one field of the
// profile's sweep section (see runFlags.profileFlags).
func (sf *sweepFlags) profileFlags() []profileFlag {
	return []profileFlag{
		{"by", "sweep.by", &sf.by},
		{"from", "sweep.from", &sf.from},
		{"to", "sweep.to", &sf.to},
		{"steps", "sweep.steps", &sf.steps},
		{"step", "sweep.step", &sf.step},
		{"step-warmup", "sweep.warmup", &sf.stepWarm},
		{"slo-p99", "sweep.slo.p99", &sf.sloP99},
		{"slo-errors", "sweep.slo.error_rate", &sf.sloErr},
		{"keep-going", "sweep.keep_going", &sf.keepGoing},
		{"repeat", "sweep.repeat", &sf.repeat},
	}
}

// needSweepFlags names the flags a sweep needs when the profile has no
// sweep section: --from, --to and --steps (those not given), or a
// profile that has one.
func needSweepFlags(profile string, set func(string) bool) error {
	var missing []string
	for _, name := range []string{"from", "to", "steps"} {
		if !set(name) {
			missing = append(missing, "--"+name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	what := strings.Join(missing, ", ")
	if n := len(missing); n > 1 {
		what = strings.Join(missing[:n-1], ", ") + " and " + missing[n-1]
	}
	return fmt.Errorf("sweep needs the loads to step through: give %s (e.g. --from 100 --to 1000 --steps 5, in ops/s; --by vus or sessions steps those), or a profile with a sweep section: --profile capacity-sweep (profile %s has none)", what, profile)
}
