package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateK8s = flag.Bool("update-k8s", false, "rewrite testdata/k8s-job/*.yaml from the k8s-job output")

// k8sGolden are k8s-job invocations whose manifests are kept in
// testdata/k8s-job: the output must stay byte for byte what it was. The
// module in internal/kube/apicheck strict-decodes each of these files
// into the typed k8s.io/api structs and checks that they print back to
// the same bytes.
var k8sGolden = []struct {
	name    string
	profile bool // a profile file (carried in a ConfigMap)
	args    []string
}{
	{"full", true, []string{"--parallelism", "4", "--image", "ghcr.io/example/mcpbench:v1", "--name", "load-test", "--claim-size", "2Gi",
		"--env-from-secret", "mcp-token", "--cpu", "2", "--memory", "1Gi", "--url", "http://mcp.default.svc:8080/mcp",
		"-H", "Authorization: Bearer ${TOKEN}", "--threshold", "p99<250ms", "--get-stream"}},
	{"minimal", false, []string{"--parallelism", "1", "--image", "img"}},
	{"settings", false, []string{"--parallelism", "3", "--image", "registry.local/mcpbench:latest", "--namespace", "bench", "--name", "n1",
		"--claim", "res", "--claim-size", "1024Mi", "--storage-class", "nfs", "--cpu", "0.5", "--memory", "1.5Gi",
		"--image-pull-policy", "IfNotPresent", "--env-from-secret", "a", "--env-from-secret", "b", "--graceful-stop", "10s",
		"--url", "http://svc/mcp", "--tool", "echo", "--args", `{"text":"$(HOME) yes no 1e3"}`, "--rate", "12.5", "--duration", "90s"}},
	{"builtin-profile", false, []string{"--parallelism", "2", "--image", "img", "--profile", "tools-mix", "--memory", "300M", "--cpu", "1500m",
		"--url", "http://svc/mcp"}},
}

// The manifests of k8sGolden are byte for byte the files in
// testdata/k8s-job (go test -run TestK8sJobGolden -update-k8s rewrites them).
func TestK8sJobGolden(t *testing.T) {
	t.Parallel()
	for _, tt := range k8sGolden {
		args := append([]string{"k8s-job", "--start-at", "2026-11-21T06:00:00Z"}, tt.args...)
		if tt.profile {
			prof := filepath.Join(t.TempDir(), "load.yaml")
			if err := os.WriteFile(prof, []byte("name: load\nrate: 40\nduration: 1s\nwarmup: 0s\nops:\n  - method: tools/call\n    tool: echo\n    arguments: {text: \"$(x)\"}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args = append(args, "--profile", prof)
		}
		out, errs, code := cli(t.Context(), args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", tt.name, code, errs)
		}
		file := filepath.Join("testdata", "k8s-job", tt.name+".yaml")
		if *updateK8s {
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("%s: the manifest differs from %s:\n%s", tt.name, file, out)
		}
	}
}
