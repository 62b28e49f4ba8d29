package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/cobra"
)

func newSweepCmd() *cobra.Command {
	f := &runFlags{}
	var (
		by                     string
		from, to, sloErr       float64
		steps                  int
		step, stepWarm, sloP99 time.Duration
		keepGoing              bool
	)
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Step the load up to the capacity knee and find the maximum sustainable rate under an SLO",
		Long: `sweep steps the load from --from to --to in --steps equal steps of --step each
(after a warm-up per step) and judges each step against the SLO: response-time
p99, error rate, and a clean replay ledger. It stops once a step is clearly
past the knee. The verdict gives the maximum sustainable rate under the SLO
(and the load where the SLO is crossed, interpolated), and the knee where
latency starts to climb steeply. With --target-pid it also gives the target's
CPU and memory per step; a session sweep gives memory per session.

--by rate steps the arrival rate (ops/s); --by vus the closed-model VUs;
--by sessions the concurrent sessions, each holding a GET stream.

Each step is a full results directory (step-01 …) under --out, with sweep.json
and sweep.csv beside them; "mcpbench plot DIR" draws the capacity charts.
Ctrl-C keeps every finished step.`,
		Example: `  mcpbench sweep --profile capacity-sweep                       # embedded server
  mcpbench serve --addr 127.0.0.1:8080 --pid-file /tmp/mcpbench-serve.pid &
  mcpbench sweep --profile capacity-sweep --url http://127.0.0.1:8080/mcp --target-pid "$(cat /tmp/mcpbench-serve.pid)"
  mcpbench sweep --by sessions --from 1000 --to 5000 --steps 5 --rate 100 --step 10s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			env, err := prepare(cmd, f, func(p *workload.Profile) error {
				if p.Sweep == nil {
					p.Sweep = &workload.SweepSpec{}
				}
				s := p.Sweep
				if set("by") {
					s.By = by
				}
				if set("from") {
					s.From = from
				}
				if set("to") {
					s.To = to
				}
				if set("steps") {
					s.Steps = steps
				}
				if set("step") {
					s.Step = workload.Duration(step)
				}
				if set("step-warmup") {
					s.Warmup = workload.Duration(stepWarm)
				}
				if set("slo-p99") {
					s.SLO.P99 = workload.Duration(sloP99)
				}
				if set("slo-errors") {
					s.SLO.ErrorRate = &sloErr
				}
				if set("keep-going") {
					s.KeepGoing = keepGoing
				}
				return nil
			})
			if err != nil {
				return err
			}
			defer env.close()
			if f.out == "" {
				return usageError("sweep needs a results directory (do not use --no-results)")
			}
			prog := newProgress(env.stderr, f.quiet, f.noProgress, &workload.Plan{Profile: workload.Profile{Duration: env.profile.Sweep.Step, Warmup: env.profile.Sweep.Warmup}})
			sw, err := workload.RunSweep(interruptible(env.ctx), env.profile, workload.SweepOptions{
				Dir:       f.out,
				Embedded:  env.embedded,
				Tool:      "mcpbench " + env.ver,
				TargetPID: f.targetPID,
				RunInfo:   env.runInfo,
				OnInterval: func(n int, p workload.Progress) {
					prog.interval(p)
				},
				OnStep: func(st metrics.SweepStep) {
					prog.done()
					verdict := "pass"
					switch {
					case st.Interrupted:
						verdict = "interrupted (a partial step, not judged)"
					case !st.Pass:
						verdict = "FAIL: " + strings.Join(st.Reasons, "; ")
					}
					fmt.Fprintf(env.stderr, "mcpbench: step %d (%s): achieved %.1f ops/s, p99 %.2f ms, errors %.2f%%: %s\n", st.N, metrics.FormatLoad(st.Value, st.By), st.Achieved, st.Latency.P99, st.ErrorRate, verdict)
					prog = newProgress(env.stderr, f.quiet, f.noProgress, &workload.Plan{Profile: workload.Profile{Duration: env.profile.Sweep.Step, Warmup: env.profile.Sweep.Warmup}})
				},
			})
			prog.done()
			if sw == nil {
				var pe *workload.ProfileError
				if errors.As(err, &pe) {
					return &exitError{code: exitUsage, err: err}
				}
				return &exitError{code: exitFailed, err: err}
			}
			sw.Target = workload.ShowURL(env.profile.URL, os.LookupEnv)
			if env.embedded {
				sw.Target += " (embedded reference server)"
			}
			metrics.WriteSweepFiles(f.out, sw)
			if f.jsonOut {
				writeJSON(env.stdout, sw)
			} else {
				metrics.WriteSweepText(env.stdout, sw)
			}
			fmt.Fprintf(env.stderr, "mcpbench: sweep results in %s (sweep.json, sweep.csv, %s); draw the capacity charts with: mcpbench plot %s\n", f.out, filepath.Join(f.out, "step-NN"), f.out)
			switch {
			case sw.Verdict.Interrupted:
				return &exitError{code: exitInterrupted, err: errors.New(sw.Verdict.StoppedEarly)}
			case err != nil:
				return &exitError{code: exitFailed, err: err}
			case len(sw.Results) == 0:
				return &exitError{code: exitFailed, err: errors.New("no step ran")}
			}
			return nil
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	for _, name := range []string{"duration", "warmup", "threshold", "no-results"} {
		fl.MarkHidden(name)
	}
	fl.Lookup("out").Usage = "results directory (default results/<time>-<profile>): sweep.json, sweep.csv and each step's run files in step-NN/"
	fl.StringVar(&by, "by", "", "what to step: rate (default), vus or sessions")
	fl.Float64Var(&from, "from", 0, "first step's load")
	fl.Float64Var(&to, "to", 0, "last step's load")
	fl.IntVar(&steps, "steps", 0, "number of steps (≥ 2)")
	fl.DurationVar(&step, "step", 0, "measured time per step (default 15s)")
	fl.DurationVar(&stepWarm, "step-warmup", 0, "warm-up before each step (default 3s)")
	fl.DurationVar(&sloP99, "slo-p99", 0, "SLO: response-time p99 at most (default 50ms)")
	fl.Float64Var(&sloErr, "slo-errors", 0, "SLO: error rate at most, % (default 1)")
	fl.BoolVar(&keepGoing, "keep-going", false, "run every step, even past the knee")
	return cmd
}
