package main

import (
	"context"
	"errors"
	"flag"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/refserver"
)

// TestMain lets a test run this binary as mcpbench itself (MCPBENCH_MAIN=1),
// for the tests that need a real process: signals, --processes (whose
// children are this binary: MCPBENCH_MAIN is set for the whole test
// process, so those tests need no t.Setenv and can run in parallel).
//
// Unless -test.parallel is given (or -race slows everything down), up to
// 4 parallel tests per core run at once (not 1): most end-to-end tests
// wait on real time, not the CPU.
func TestMain(m *testing.M) {
	if os.Getenv("MCPBENCH_MAIN") == "1" {
		main()
		return
	}
	os.Setenv("MCPBENCH_MAIN", "1")
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given && !raceEnabled { // under -race the CPU, not real time, is what the tests wait on
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
	os.Exit(m.Run())
}

// Ctrl-C during set-up exits 130, "interrupted during set-up", not 1 with
// transport failures (issue item 13).
func TestInterruptDuringSetUpExits130(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // accepts and never answers: initialize hangs
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	out, errs, code := cli(ctx, "run", "--url", "http://"+l.Addr().String()+"/mcp", "--vus", "3", "--no-results", "-q")
	if code != exitInterrupted || !strings.Contains(out+errs, "interrupted during set-up") || strings.Contains(out+errs, "transport") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
}

// A second Ctrl-C stops at once, keeping what was written: here the
// first one's teardown would wait on DELETEs the server never answers.
func TestSecondInterruptStopsAtOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs mcpbench as a process")
	}
	h, err := refserver.NewHandler(refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			<-r.Context().Done() // DELETE hangs: a graceful end takes its 5 s timeout
			return
		}
		h.ServeHTTP(w, r)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "res")
	cmd := exec.Command(os.Args[0], "run", "--url", "http://"+l.Addr().String()+"/mcp", "--vus", "4", "--duration", "1m", "--out", out, "-q")
	cmd.Env = append(os.Environ(), "MCPBENCH_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for { // wait until the run is measuring (its first interval is written)
		if b, _ := os.ReadFile(filepath.Join(out, "intervals.csv")); strings.Count(string(b), "\n") >= 2 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the run did not start")
		}
		time.Sleep(50 * time.Millisecond) // polling with a deadline: another process
	}
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(300 * time.Millisecond) // the first Ctrl-C's teardown is under way (DELETEs hang for 5 s)
	t0 := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("exit: %v", err)
		}
		if took := time.Since(t0); took > 2*time.Second {
			t.Fatalf("stopped %v after the second Ctrl-C, want at once", took)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the second Ctrl-C did not stop the process")
	}
	for _, f := range []string{"run.json", "intervals.csv", "histograms.hlog"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s not kept: %v", f, err)
		}
	}
}

// --protocol 2026-07-28 without --url starts the embedded server in that
// mode (issue item 11: it failed with an empty report).
func TestRunProtocol2026Embedded(t *testing.T) {
	t.Parallel()
	out, errs, code := runPar(t, "run", "--protocol", "2026-07-28", "--duration", "1s", "--warmup", "0s", "--no-results", "-q")
	if code != exitOK || !strings.Contains(out, "protocol 2026-07-28") || !strings.Contains(errs, "2026-07-28 mode") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
}
