package launch

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/live"
	"github.com/mcpbench/mcpbench/results"
)

// LiveSpec are the live outputs of run, sweep and soak (their flags).
type LiveSpec struct {
	Prometheus       string        // --prometheus ADDR: serve /metrics
	PrometheusLinger time.Duration // keep /metrics up until the next scrape, at most this long
	JSONL            string        // --out-jsonl FILE
	RemoteWrite      string        // --prometheus-rw URL
	JUnit            string        // --junit FILE (junit.go)
	Dashboard        string        // --dashboard ADDR
	DashboardLinger  time.Duration
}

// liveOutputs are a command's live sinks: the Prometheus endpoint (one
// for the process: a sweep's steps add to the same counters) and the
// JSON-lines file.
type liveOutputs struct {
	f    *LiveSpec
	srv  *live.Server
	file *os.File
	js   *live.JSONL
	rw   *live.RemoteWrite
	dash *live.Dashboard
	dir  string // the results directory, for the dashboard's report ("" none)
}

// startLive opens the live outputs the flags ask for; errors name the
// flag.
func startLive(f *LiveSpec, stderr interface{ Write([]byte) (int, error) }) (*liveOutputs, error) {
	lo := &liveOutputs{f: f}
	if err := CheckJUnitPath(f.JUnit); err != nil {
		return nil, err
	}
	if f.Prometheus != "" {
		srv, err := live.Serve(f.Prometheus)
		if err != nil {
			return nil, err
		}
		lo.srv = srv
		if host, _, _ := net.SplitHostPort(srv.Addr()); !net.ParseIP(host).IsLoopback() {
			fmt.Fprintf(stderr, "mcpbench: %s listens on %s, beyond this host: anyone who reaches it sees the run's metrics\n", setting.Prometheus, srv.Addr())
		}
		fmt.Fprintf(stderr, "mcpbench: live metrics at http://%s/metrics\n", srv.Addr())
	}
	if f.RemoteWrite != "" {
		var src *live.Prometheus
		if lo.srv != nil {
			src = lo.srv.Sink // fed first (sinks): pushed as served
		}
		rw, err := startRemoteWrite(f.RemoteWrite, src)
		if err != nil {
			lo.close(context.Background(), stderr)
			return nil, err
		}
		lo.rw = rw
	}
	if f.JSONL != "" {
		file, err := os.Create(f.JSONL)
		if err != nil {
			lo.close(context.Background(), stderr)
			return nil, fmt.Errorf("%s: %w", setting.JSONL, err)
		}
		lo.file, lo.js = file, live.NewJSONL(file)
	}
	if f.Dashboard != "" {
		d, err := live.ServeDashboard(f.Dashboard)
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
			fmt.Fprintf(stderr, "mcpbench: %s fell behind: %d lines dropped\n", setting.JSONL, n)
		}
		if err := lo.js.Err(); err != nil {
			fmt.Fprintf(stderr, "mcpbench: %s: %v\n", setting.JSONL, err)
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
		if lo.f.DashboardLinger > 0 && ctx.Err() == nil {
			fmt.Fprintf(stderr, "mcpbench: the dashboard stays up at %s for %v (%s; Ctrl-C ends it)\n", lo.dash.URL(), lo.f.DashboardLinger, setting.DashboardLinger)
		}
		lo.dash.Close(ctx, lo.f.DashboardLinger)
	}
	if lo.srv != nil && !lo.srv.Close(ctx, lo.f.PrometheusLinger) && lo.f.PrometheusLinger > 0 && ctx.Err() == nil {
		fmt.Fprintf(stderr, "mcpbench: no scrape of /metrics came within %s %v after the run\n", setting.PrometheusLinger, lo.f.PrometheusLinger)
	}
}

// openLive starts the live outputs the flags ask for, closed with the
// env (after the run: the Prometheus endpoint lingers there).
func (e *env) openLive() error {
	lo, err := startLive(&e.spec.Live, e.stderr)
	if err != nil {
		e.close()
		return WithExitCode(ExitUsage, err)
	}
	lo.dir = e.spec.Out
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
	fmt.Fprintf(stderr, "mcpbench: %s %s: %d pushes sent, %d dropped (queue full), %d failed, %d unsent at the end, %d retries\n",
		setting.RemoteWrite, rw.URL(), st.Sent, st.Dropped, st.Failed, st.Unsent, st.Retries)
	if st.LastErr != "" && st.Failed+st.Unsent > 0 {
		fmt.Fprintf(stderr, "mcpbench: %s: last error: %s\n", setting.RemoteWrite, st.LastErr)
	}
}
