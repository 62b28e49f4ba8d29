package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/internal/testenv"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/results"
)

// The signal trials (issue 33 item 4): each stop signal — SIGINT, a
// double SIGINT, SIGTERM, SIGHUP, and SIGTERM to the parent and its
// children at once (systemd's stop of a unit's cgroup) — during the
// sessions' set-up, the measured window and the sessions' closes
// (DELETE, which the server never answers), in one process and with
// --processes 2: the summary of what was measured is written (merged
// with --processes, from both segments), the exit is 128 + the signal,
// no child is left running and no temporary file is left. Each trial
// logs one line "trial| signal | phase | processes | exit | summary |
// merged | leftovers |" (scripts/signal-matrix.sh makes the table of
// them).
func TestSignalTrials(t *testing.T) {
	testenv.Long(t)
	type sigs struct {
		name  string
		sig   syscall.Signal
		twice bool
		group bool // the parent and its children at once
	}
	signals := []sigs{
		{"INT", syscall.SIGINT, false, false},
		{"INT INT", syscall.SIGINT, true, false},
		{"TERM", syscall.SIGTERM, false, false},
		{"HUP", syscall.SIGHUP, false, false},
		{"TERM to the group", syscall.SIGTERM, false, true},
	}
	for _, procs := range []int{1, 2} {
		for _, phase := range []string{"start", "window", "delete"} {
			for _, s := range signals {
				if s.group && procs == 1 {
					continue // the same as TERM: one process
				}
				t.Run(fmt.Sprintf("%s/%s/processes-%d", strings.ReplaceAll(s.name, " ", "-"), phase, procs), func(t *testing.T) {
					t.Parallel()
					signalTrial(t, s.name, s.sig, s.twice, s.group, phase, procs)
				})
			}
		}
	}
}

// trialServer is the reference server on loopback, except that DELETE
// never answers and, with hang, no request does (the sessions' set-up
// never ends); it counts the requests and the DELETEs it got.
func trialServer(t *testing.T, hang bool) (url string, requests, deletes *atomic.Int64) {
	t.Helper()
	h, err := refserver.NewHandler(refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	requests, deletes = &atomic.Int64{}, &atomic.Int64{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Method == http.MethodDelete {
			deletes.Add(1)
		}
		if hang || r.Method == http.MethodDelete {
			io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
			return
		}
		h.ServeHTTP(w, r)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String() + "/mcp", requests, deletes
}

func signalTrial(t *testing.T, name string, sig syscall.Signal, twice, group bool, phase string, procs int) {
	url, requests, deletes := trialServer(t, phase == "start")
	tmp := t.TempDir()
	out := filepath.Join(tmp, "res")
	args := []string{"run", "--url", url, "--protocol", "2025-11-25", "--vus", "4", "--out", out, "-q", "--duration", "1m"} // a fixed version: no discover probe first, which the hanging server would hold for the request timeout
	if phase == "delete" {
		args[len(args)-1] = "2s" // the window ends by itself; the VUs' DELETEs hang
	}
	if procs > 1 {
		args = append(args, "--processes", strconv.Itoa(procs), "--start-delay", "1s")
	}
	p := startMCPBench(t, false, args...)
	segs := []string{out}
	if procs > 1 {
		segs = nil
		for i := range procs {
			segs = append(segs, filepath.Join(out, "segment-"+strconv.Itoa(i)))
		}
	}
	switch phase {
	case "start": // every process is initializing its sessions (the server holds them)
		waitFor(t, 60*time.Second, "the sessions' set-up", func() bool {
			return requests.Load() >= 4 && (procs == 1 || len(procsWith(tmp)) == procs)
		})
	case "window":
		waitFor(t, 60*time.Second, "the measured window", func() bool {
			for _, d := range segs {
				if !sigMeasuring(d) {
					return false
				}
			}
			return true
		})
	case "delete":
		waitFor(t, 60*time.Second, "the sessions' DELETEs", func() bool { return deletes.Load() >= 4 })
	}
	send := func() {
		targets := []int{p.cmd.Process.Pid}
		if group {
			targets = append(targets, procsWith(tmp)...)
		}
		for _, pid := range targets {
			syscall.Kill(pid, sig) // a process that has exited already is no error here
		}
	}
	send()
	if twice {
		waitFor(t, 30*time.Second, "the first interrupt's notice", func() bool {
			return strings.Contains(p.stderr.String(), "interrupted: finishing the results") || exited(p)
		})
		send()
	}
	code := p.wait(t, 60*time.Second)
	errs := p.stderr.String()

	wantCode := 128 + int(sig)
	summary, merged, leftovers := "no", "-", "none"
	var sum *results.Summary
	if b, err := os.ReadFile(filepath.Join(out, results.FileSummary)); err == nil {
		sum = &results.Summary{}
		if err := json.Unmarshal(b, sum); err != nil {
			t.Fatalf("summary.json: %v", err)
		}
		summary = fmt.Sprintf("yes (%d ops)", sum.All.Count)
	}
	if procs > 1 {
		n := 0
		for _, d := range segs {
			if _, err := os.Stat(filepath.Join(d, results.FileSummary)); err == nil {
				n++
			}
		}
		merged = fmt.Sprintf("%d of %d segments", n, procs)
		if !strings.Contains(errs, fmt.Sprintf("merged results of %d processes", procs)) {
			merged += ", not merged"
		}
	}
	var left []string
	if pids := procsWith(tmp); len(pids) > 0 {
		left = append(left, fmt.Sprintf("%d children running", len(pids)))
	}
	filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			left = append(left, "temporary file "+d.Name())
		}
		return nil
	})
	if len(left) > 0 {
		leftovers = strings.Join(left, ", ")
	}
	t.Logf("trial| %s | %s | %d | %d | %s | %s | %s |", name, phase, procs, code, summary, merged, leftovers)

	if code != wantCode {
		t.Errorf("exit %d, want %d (128 + %v)", code, wantCode, sig)
	}
	if sum == nil {
		t.Errorf("no summary.json in %s", out)
	} else if (phase != "start") != (sum.All.Count > 0) {
		t.Errorf("summary.json: %d ops measured in phase %s", sum.All.Count, phase)
	}
	if procs > 1 && merged != fmt.Sprintf("%d of %d segments", procs, procs) {
		t.Errorf("merged: %s", merged)
	}
	if leftovers != "none" {
		t.Errorf("leftovers: %s", leftovers)
	}
	if t.Failed() {
		t.Logf("mcpbench wrote:\n%s", errs)
	}
	noChildrenLeft(t, tmp)
}

// exited reports whether the process has exited.
func exited(p *mcpbenchProc) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}
