package main

import (
	"strings"
	"testing"
)

// Transport and authorization failures that stop a run name their cause
// once in what mcpbench prints (summary and stderr together), with the
// run's exit code.
func TestRunFailuresSayWhatHappenedOnce(t *testing.T) {
	t.Setenv("MCPBENCH_OAUTH_CLIENT_SECRET", "S3cret-for-test")
	plain := startRefServer(t)
	auth := startServe(t, "--auth")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"h2c against HTTP/1.1", []string{"--url", plain, "--http", "2"}, "does not speak h2c"},
		{"401 with resource_metadata", []string{"--url", auth.url}, "give --oauth-client-id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--vus", "1", "--duration", "1s", "--warmup", "0s", "--no-progress", "--no-results"}, tc.args...)
			out, errs, code := run(t, args...)
			if code != exitFailed {
				t.Errorf("exit %d, want %d", code, exitFailed)
			}
			if n := strings.Count(out+errs, tc.want); n != 1 {
				t.Errorf("%q said %d times, want once:\n%s\n%s", tc.want, n, out, errs)
			}
			if strings.Contains(out+errs, "frame too large") || strings.Contains(out+errs, "S3cret-for-test") {
				t.Errorf("output has the HTTP/2 client's misleading cause or the secret:\n%s\n%s", out, errs)
			}
		})
	}
}
