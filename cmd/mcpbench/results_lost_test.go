package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A results write that fails is exit 3 (exitResultsLost) with what was
// lost named, never 0 (issue 33 item 2). The tests run as root, which no
// file mode stops, so the failure is planted as a full disk is: the
// process runs under a file size limit of 1 KiB (ulimit -f, RLIMIT_FSIZE:
// every write past it fails with EFBIG, root's too), which run.json and
// summary.json exceed.
func TestResultsWriteFailedExits3(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs mcpbench as a process")
	}
	if runtime.GOOS != "linux" {
		t.Skip("ulimit -f: Linux")
	}
	for _, args := range [][]string{
		{"run", "--duration", "1s", "--warmup", "0s"},
		{"run", "--duration", "1s", "--warmup", "0s", "--processes", "2", "--start-delay", "1s"},
		{"soak", "--duration", "2s"},
		{"sweep", "--profile", "capacity-sweep", "--steps", "2", "--step", "1s", "--step-warmup", "0s", "--from", "20", "--to", "40"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "res")
			cmd := exec.Command("/bin/sh", append([]string{"-c", `ulimit -f 2; exec "$0" "$@"`, os.Args[0]}, append(args, "--out", out, "-q")...)...)
			cmd.Env = append(os.Environ(), "MCPBENCH_MAIN=1")
			var buf sigBuffer
			cmd.Stdout = &buf // a pipe: the limit is on files
			code, errs := runBounded(t, cmd, &buf)
			if code != exitResultsLost || !strings.Contains(errs, "results lost: ") || !strings.Contains(errs, "file too large") {
				t.Fatalf("exit %d, want 3 naming the results lost:\n%s", code, errs)
			}
			if strings.Contains(errs, "Next: mcpbench plot") || strings.Contains(errs, "results in "+out+"\n") {
				t.Fatalf("the output points at results that are not there:\n%s", errs)
			}
		})
	}
}

// The summary printed to a stdout on the same full disk (`mcpbench run >
// log`, CI's usual form) fails too: that is still exit 3 naming the lost
// results, and a summary that cannot be printed while the results are
// whole is exit 1 naming the print, never the usage code 2 (review of
// issue 33 item 2: the print's error was returned as it was).
func TestPrintFailedExitCodes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs mcpbench as a process")
	}
	if runtime.GOOS != "linux" {
		t.Skip("ulimit -f, /dev/full: Linux")
	}
	for _, tc := range []struct {
		name, script string
		want         int
		says         string
	}{
		{"full disk, stdout a file on it", `ulimit -f 2; exec "$0" "$@" > "$OUT.stdout"`, exitResultsLost, "results lost: "},
		{"stdout /dev/full, results whole", `exec "$0" "$@" > /dev/full`, exitFailed, "printing the summary failed"},
		{"--processes 2, stdout /dev/full", `exec "$0" "$@" --processes 2 --start-delay 1s > /dev/full`, exitFailed, "printing the summary failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "res")
			cmd := exec.Command("/bin/sh", "-c", tc.script, os.Args[0], "run", "--duration", "1s", "--warmup", "0s", "--format", "json", "--out", out)
			cmd.Env = append(os.Environ(), "MCPBENCH_MAIN=1", "OUT="+out)
			var buf sigBuffer
			if code, errs := runBounded(t, cmd, &buf); code != tc.want || !strings.Contains(errs, tc.says) {
				t.Fatalf("exit %d, want %d saying %q:\n%s", code, tc.want, tc.says, errs)
			}
		})
	}
}

// runBounded runs cmd with its stderr in buf, for at most 2 minutes
// (killed then, failing t), and returns its exit code and buf's text.
func runBounded(t *testing.T, cmd *exec.Cmd, buf *sigBuffer) (int, string) {
	t.Helper()
	cmd.Stderr = buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running after 2 minutes:\n%s", buf.String())
	}
	return cmd.ProcessState.ExitCode(), buf.String()
}
