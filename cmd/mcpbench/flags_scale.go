package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcpbench/mcpbench/launch"
	"github.com/mcpbench/mcpbench/live"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// scaleFlags are run's flags for tests bigger than one process: execution
// segments, the aligned start, and child processes (launch.Spec).
type scaleFlags struct {
	segment, sequence, startAt string
	processes                  int
	startDelay                 time.Duration
}

// registerScale defines them (run only: sweep and soak run whole tests).
func (s *scaleFlags) registerScale(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&s.segment, "segment", "", "run one execution segment of the test: INDEX/COUNT (0-based, e.g. 0/4: a quarter of the arrival rate, VUs and churn) or FROM:TO (k6 style, e.g. 1/4:1/2); merge the segments' results with 'mcpbench merge'")
	fl.StringVar(&s.sequence, "segment-sequence", "", "the segments the test is cut into, k6 style: 0,1/4,1/2,1 (default: COUNT equal ones)")
	fl.StringVar(&s.startAt, "start-at", "", "start the run's clock at this time (RFC 3339, unix seconds, or +DURATION from now): sessions are set up before it, so segments started apart share one schedule")
	fl.IntVar(&s.processes, "processes", 0, "run the test as N child processes of mcpbench (segments 0/N … N−1/N, each with its own open-file limit and GC), show one merged progress line, and merge their results into --out (each in --out/segment-I)")
	fl.DurationVar(&s.startDelay, "start-delay", 0, "with --processes and no --start-at: start the clock this long after the children are launched, for their set-up (default 5s + 1ms per session of a child)")
}

// check refuses flags that do not go together.
func (s *scaleFlags) check(set func(string) bool) error {
	if s.processes < 0 || s.processes > launch.MaxProcesses {
		return fmt.Errorf("--processes %d: want 1 … %d", s.processes, launch.MaxProcesses)
	}
	if s.processes > 1 && (set("segment") || set("segment-sequence")) {
		return errors.New("--processes runs its own segments: leave --segment and --segment-sequence out")
	}
	if set("start-delay") && s.processes < 2 {
		return errors.New("--start-delay goes with --processes")
	}
	return nil
}

// registerLive defines the live outputs' flags of run, sweep and soak.
func registerLive(fl *pflag.FlagSet, l *launch.LiveSpec) {
	fl.StringVar(&l.Prometheus, "prometheus", "", "serve live metrics at http://ADDR/metrics while the run goes (Prometheus text/OpenMetrics/protobuf; e.g. 127.0.0.1:9464)")
	fl.DurationVar(&l.PrometheusLinger, "prometheus-linger", 0, "after the run, keep /metrics up until the next scrape (at most this long), so the final counts reach Prometheus")
	fl.StringVar(&l.RemoteWrite, "prometheus-rw", "", "push live metrics to this Prometheus remote-write URL every interval (e.g. http://127.0.0.1:9090/api/v1/write; credentials from $"+live.EnvRemoteWriteToken+" or $"+live.EnvRemoteWriteUser+"/_PASSWORD)")
	fl.StringVar(&l.JSONL, "out-jsonl", "", "stream one JSON line per interval to this file (start and end lines too)")
	fl.StringVar(&l.JUnit, "junit", "", "write the verdicts as JUnit XML to this file for CI: one test case per threshold (a sweep: per step's SLO; a soak: per verdict too), failures with the measured value")
	fl.StringVar(&l.Dashboard, "dashboard", "", "serve a live web page of the run at http://ADDR/ (e.g. 127.0.0.1:5665; \":PORT\" stays on loopback); it becomes the HTML report at the end")
	fl.DurationVar(&l.DashboardLinger, "dashboard-linger", 0, "after the run, keep the dashboard and its report up this long (Ctrl-C ends it sooner)")
}
