package main

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/mcpbench/mcpbench/live"
	"github.com/mcpbench/mcpbench/results"
	"github.com/spf13/pflag"
)

// liveFlags are the live outputs' flags of run, sweep and soak.
type liveFlags struct {
	prometheus string
	linger     time.Duration
	jsonl      string
	rw         string
	junit      string // --junit FILE (junit.go)
	dashboard  string
	dashLinger time.Duration
}

func (l *liveFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&l.prometheus, "prometheus", "", "serve live metrics at http://ADDR/metrics while the run goes (Prometheus text/OpenMetrics/protobuf; e.g. 127.0.0.1:9464)")
	fl.DurationVar(&l.linger, "prometheus-linger", 0, "after the run, keep /metrics up until the next scrape (at most this long), so the final counts reach Prometheus")
	fl.StringVar(&l.rw, "prometheus-rw", "", "push live metrics to this Prometheus remote-write URL every interval (e.g. http://127.0.0.1:9090/api/v1/write; credentials from $"+live.EnvRemoteWriteToken+" or $"+live.EnvRemoteWriteUser+"/_PASSWORD)")
	fl.StringVar(&l.jsonl, "out-jsonl", "", "stream one JSON line per interval to this file (start and end lines too)")
	fl.StringVar(&l.junit, "junit", "", "write the verdicts as JUnit XML to this file for CI: one test case per threshold (a sweep: per step's SLO; a soak: per verdict too), failures with the measured value")
	fl.StringVar(&l.dashboard, "dashboard", "", "serve a live web page of the run at http://ADDR/ (e.g. 127.0.0.1:5665; \":PORT\" stays on loopback); it becomes the HTML report at the end")
	fl.DurationVar(&l.dashLinger, "dashboard-linger", 0, "after the run, keep the dashboard and its report up this long (Ctrl-C ends it sooner)")
}

// liveOutputs are a command's live sinks: the Prometheus endpoint (one
// for the process: a sweep's steps add to the same counters) and the
// JSON-lines file.
type liveOutputs struct {
	f    *liveFlags
	srv  *live.Server
	file *os.File
	js   *live.JSONL
	rw   *live.RemoteWrite
	dash *live.Dashboard
	dir  string // the results directory, for the dashboard's report ("" none)
}

// startLive opens the live outputs the flags ask for; errors name the
// flag.
func startLive(f *liveFlags, stderr interface{ Write([]byte) (int, error) }) (*liveOutputs, error) {
	lo := &liveOutputs{f: f}
	if err := checkJUnitPath(f.junit); err != nil {
		return nil, err
	}
	if f.prometheus != "" {
		srv, err := live.Serve(f.prometheus)
		if err != nil {
			return nil, err
		}
		lo.srv = srv
		if host, _, _ := net.SplitHostPort(srv.Addr()); !net.ParseIP(host).IsLoopback() {
			fmt.Fprintf(stderr, "mcpbench: --prometheus listens on %s, beyond this host: anyone who reaches it sees the run's metrics\n", srv.Addr())
		}
		fmt.Fprintf(stderr, "mcpbench: live metrics at http://%s/metrics\n", srv.Addr())
	}
	if f.rw != "" {
		var src *live.Prometheus
		if lo.srv != nil {
			src = lo.srv.Sink // fed first (sinks): pushed as served
		}
		rw, err := startRemoteWrite(f.rw, src)
		if err != nil {
			lo.close(context.Background(), stderr)
			return nil, err
		}
		lo.rw = rw
	}
	if f.jsonl != "" {
		file, err := os.Create(f.jsonl)
		if err != nil {
			lo.close(context.Background(), stderr)
			return nil, fmt.Errorf("--out-jsonl: %w", err)
		}
		lo.file, lo.js = file, live.NewJSONL(file)
	}
	if f.dashboard != "" {
		d, err := live.ServeDashboard(f.dashboard)
		if err != nil {
			lo.close(context.Background(), stderr)
			return nil, err
		}
		lo.dash = d
		fmt.Fprint(stderr, live.DashboardExposure(d.Addr()))
		fmt.Fprintf(stderr, "mcpbench: live dashboard at %s\n", d.URL())
	}
	return lo, nil
}

// sinks returns the live sinks for one run.
func (lo *liveOutputs) sinks() []results.Sink {
	var out []results.Sink
	if lo == nil {
		return out
	}
	if lo.srv != nil {
		out = append(out, lo.srv.Sink)
	}
	if lo.js != nil {
		out = append(out, lo.js)
	}
	if lo.rw != nil {
		out = append(out, lo.rw)
	}
	if lo.dash != nil {
		out = append(out, lo.dash)
	}
	return out
}

// step shows a sweep's finished step on the dashboard.
func (lo *liveOutputs) step(st results.SweepStep) {
	if lo != nil && lo.dash != nil {
		lo.dash.Step(st)
	}
}

// close ends the outputs: the JSON lines flushed, the Prometheus
// endpoint after its linger (cut short when ctx ends: a Ctrl-C).
func (lo *liveOutputs) close(ctx context.Context, stderr interface{ Write([]byte) (int, error) }) {
	if lo == nil {
		return
	}
	if lo.js != nil {
		lo.js.Close()
		if n := lo.js.Dropped(); n > 0 {
			fmt.Fprintf(stderr, "mcpbench: --out-jsonl fell behind: %d lines dropped\n", n)
		}
		if err := lo.js.Err(); err != nil {
			fmt.Fprintf(stderr, "mcpbench: --out-jsonl: %v\n", err)
		}
	}
	if lo.file != nil {
		lo.file.Close()
	}
	if lo.rw != nil {
		reportRemoteWrite(lo.rw, stderr)
	}
	if lo.dash != nil {
		lo.dash.Finish(lo.dir)
		if lo.f.dashLinger > 0 && ctx.Err() == nil {
			fmt.Fprintf(stderr, "mcpbench: the dashboard stays up at %s for %v (--dashboard-linger; Ctrl-C ends it)\n", lo.dash.URL(), lo.f.dashLinger)
		}
		lo.dash.Close(ctx, lo.f.dashLinger)
	}
	if lo.srv != nil && !lo.srv.Close(ctx, lo.f.linger) && lo.f.linger > 0 && ctx.Err() == nil {
		fmt.Fprintf(stderr, "mcpbench: no scrape of /metrics came within --prometheus-linger %v after the run\n", lo.f.linger)
	}
}

// openLive starts the live outputs the flags ask for, closed with the
// env (after the run: the Prometheus endpoint lingers there).
func (e *env) openLive() error {
	lo, err := startLive(&e.f.live, e.stderr)
	if err != nil {
		e.close()
		return usageError("%v", err)
	}
	lo.dir = e.f.out
	e.live = lo
	e.closers = append(e.closers, func() { lo.close(e.ctx, e.stderr) })
	return nil
}

// startRemoteWrite starts the --prometheus-rw sink: the series labelled
// job="mcpbench" and instance=the host name, credentials from the
// environment, the snapshots taken from src (--prometheus's sink) when
// there is one.
func startRemoteWrite(u string, src *live.Prometheus) (*live.RemoteWrite, error) {
	host, _ := os.Hostname()
	cfg := live.RemoteWriteConfig{URL: u, Labels: map[string]string{"job": "mcpbench", "instance": cmp.Or(host, "mcpbench")}, Source: src}
	if err := live.RemoteWriteAuthFromEnv(&cfg, os.LookupEnv); err != nil {
		return nil, err
	}
	return live.NewRemoteWrite(cfg)
}

// reportRemoteWrite flushes the --prometheus-rw queue (5 s at most) and
// says what reached the receiver.
func reportRemoteWrite(rw *live.RemoteWrite, stderr interface{ Write([]byte) (int, error) }) {
	st := rw.Close(5 * time.Second)
	fmt.Fprintf(stderr, "mcpbench: --prometheus-rw %s: %d pushes sent, %d dropped (queue full), %d failed, %d unsent at the end, %d retries\n",
		rw.URL(), st.Sent, st.Dropped, st.Failed, st.Unsent, st.Retries)
	if st.LastErr != "" && st.Failed+st.Unsent > 0 {
		fmt.Fprintf(stderr, "mcpbench: --prometheus-rw: last error: %s\n", st.LastErr)
	}
}
