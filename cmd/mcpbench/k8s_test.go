package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/internal/kube"
	"github.com/mcpbench/mcpbench/results"
	yaml "go.yaml.in/yaml/v3"
)

// decodeStrict decodes a YAML document into v as sigs.k8s.io/yaml's
// UnmarshalStrict does (YAML to JSON, then encoding/json), refusing a
// field v lacks. (The check against the k8s.io/api types themselves is
// in the module internal/kube/apicheck.)
func decodeStrict(doc []byte, v any) error {
	var obj any
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		return err
	}
	j, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// k8sDocs splits a printed manifest and strict-decodes each document into
// its typed struct (package kube's, whose fields the module
// internal/kube/apicheck checks against k8s.io/api's): a field the type
// does not have is an error.
func k8sDocs(t *testing.T, manifest string) (*kube.Job, *kube.ConfigMap, *kube.PersistentVolumeClaim) {
	t.Helper()
	var job *kube.Job
	var cm *kube.ConfigMap
	var pvc *kube.PersistentVolumeClaim
	for _, doc := range strings.Split(manifest, "\n---\n") {
		var kind struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &kind); err != nil {
			t.Fatal(err)
		}
		var err error
		switch kind.Kind {
		case "Job":
			job = &kube.Job{}
			err = decodeStrict([]byte(doc), job)
		case "ConfigMap":
			cm = &kube.ConfigMap{}
			err = decodeStrict([]byte(doc), cm)
		case "PersistentVolumeClaim":
			pvc = &kube.PersistentVolumeClaim{}
			err = decodeStrict([]byte(doc), pvc)
		default:
			t.Fatalf("unexpected document of kind %q:\n%s", kind.Kind, doc)
		}
		if err != nil {
			t.Fatalf("strict decode of the %s: %v\n%s", kind.Kind, err, doc)
		}
	}
	if job == nil {
		t.Fatalf("no Job in the manifest:\n%s", manifest)
	}
	return job, cm, pvc
}

// The manifest strict-decodes into the typed batch/v1 and core/v1
// structs; it is an Indexed Job whose pods run the test's segments on one
// clock and write their results to the claim; a profile file travels in a
// ConfigMap; secrets come from a Secret, never from the manifest.
func TestK8sJobManifest(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "load.yaml")
	profText := "name: load\nrate: 40\nduration: 1s\nwarmup: 0s\nops:\n  - method: tools/call\n    tool: echo\n    arguments: {text: \"$(x)\"}\n"
	if err := os.WriteFile(prof, []byte(profText), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TOKEN", "s3cr3t-value")
	out, errs, code := run(t, "k8s-job", "--parallelism", "4", "--image", "ghcr.io/example/mcpbench:v1", "--name", "load-test", "--claim-size", "2Gi",
		"--env-from-secret", "mcp-token", "--cpu", "2", "--memory", "1Gi", "--profile", prof, "--url", "http://mcp.default.svc:8080/mcp",
		"-H", "Authorization: Bearer ${TOKEN}", "--start-at", "2026-11-21T06:00:00Z", "--threshold", "p99<250ms", "--get-stream")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out+errs, "s3cr3t") {
		t.Fatal("the secret's value is in the output")
	}
	job, cm, pvc := k8sDocs(t, out)
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != kube.IndexedCompletion || *s.Completions != 4 || *s.Parallelism != 4 || *s.BackoffLimit != 0 {
		t.Fatalf("job spec %+v: want an Indexed Job of 4 completions, 4 at once, no retries", s)
	}
	pod := s.Template.Spec
	c := pod.Containers[0]
	want := []string{"run", "--get-stream=true", "--header=Authorization: Bearer ${TOKEN}", "--threshold=p99<250ms",
		"--url=http://mcp.default.svc:8080/mcp", "--profile=/etc/mcpbench/load.yaml", "--segment=$(JOB_COMPLETION_INDEX)/4",
		"--start-at=2026-11-21T06:00:00Z", "--out=/results/load-test/segment-$(JOB_COMPLETION_INDEX)", "--quiet"}
	if !slices.Equal(c.Args, want) || c.Image != "ghcr.io/example/mcpbench:v1" || pod.RestartPolicy != kube.RestartPolicyNever {
		t.Fatalf("container %q %v\nwant args %v", c.Image, c.Args, want)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "JOB_COMPLETION_INDEX" || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("env %+v: want JOB_COMPLETION_INDEX from the completion index annotation", c.Env)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef.Name != "mcp-token" {
		t.Errorf("envFrom %+v", c.EnvFrom)
	}
	if c.Resources.Requests[kube.ResourceCPU] != "2" || c.Resources.Limits[kube.ResourceMemory] != "1Gi" {
		t.Errorf("resources %+v", c.Resources)
	}
	if cm == nil || cm.Data["load.yaml"] != profText || cm.Name != "load-test-profile" {
		t.Errorf("the profile's ConfigMap: %+v", cm)
	}
	if pvc == nil || pvc.Name != "mcpbench-results" || pvc.Spec.AccessModes[0] != kube.ReadWriteMany || pvc.Spec.Resources.Requests[kube.ResourceStorage] != "2Gi" {
		t.Errorf("claim %+v", pvc)
	}
	var vols []string
	for _, v := range pod.Volumes {
		vols = append(vols, v.Name)
	}
	if !slices.Equal(vols, []string{"results", "profile"}) || pod.Volumes[0].PersistentVolumeClaim.ClaimName != "mcpbench-results" {
		t.Errorf("volumes %+v", pod.Volumes)
	}
	// The strict decoder does reject a field the API lacks.
	bad := strings.Replace(out, "completionMode: Indexed", "completionMode: Indexed\n  completionMood: Indexed", 1)
	var j kube.Job
	if err := decodeStrict([]byte(bad[strings.LastIndex(bad, "\n---\n")+5:]), &j); err == nil {
		t.Error("an unknown field decoded without error: the test would not catch one")
	}
	// A pod's command line runs: segment 1 of 4 of the test, here.
	url := startRefServer(t)
	res := filepath.Join(dir, "seg1")
	args := []string{}
	for _, a := range c.Args {
		a = strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", "1")
		switch {
		case strings.HasPrefix(a, "--profile="):
			a = "--profile=" + prof
		case strings.HasPrefix(a, "--url="):
			a = "--url=" + url
		case strings.HasPrefix(a, "--out="):
			a = "--out=" + res
		case strings.HasPrefix(a, "--start-at="):
			a = "--start-at=+0s"
		}
		args = append(args, a)
	}
	if _, errs, code := run(t, args...); code != exitOK {
		t.Fatalf("the pod's command %v: exit %d: %s", args, code, errs)
	}
	sum, err := results.ReadSummary(filepath.Join(res, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Arrivals: completed, or dropped or interrupted on a busy machine.
	if n := sum.All.Count + sum.All.Dropped + sum.All.Interrupted; sum.Segment == nil || sum.Segment.Segment != "1/4:1/2" || n != 10 || sum.All.Count == 0 || sum.GETStreams == nil {
		t.Errorf("the pod ran %+v, %d arrivals, %d completed (want segment 1/4:1/2, 10 of the 40), GET streams %+v", sum.Segment, n, sum.All.Count, sum.GETStreams)
	}
}

// Literal credentials are refused (the manifest is printed), and the
// job's own settings are checked; the errors name the flag.
func TestK8sJobRefuses(t *testing.T) {
	base := []string{"k8s-job", "--parallelism", "2", "--image", "img"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-H", "Authorization: Bearer literal-token"}, "header Authorization carries a literal secret"},
		{[]string{"-H", "X-Api-Key: k3y"}, "header X-Api-Key"},
		{[]string{"--url", "http://user:pw@svc/mcp"}, "--url carries a literal credential"},
		{[]string{"--parallelism", "0"}, "--parallelism"},
		{[]string{"--image", ""}, "--image"},
		{[]string{"--name", "Bad_Name"}, "--name"},
		{[]string{"--out", "x"}, "--out"},
		{[]string{"--claim-size", "lots"}, "--claim-size"},
		{[]string{"--cpu", "many"}, "--cpu"},
		{[]string{"--image-pull-policy", "Sometimes"}, "--image-pull-policy"},
		{[]string{"--rate", "-1"}, "rate"},
	} {
		args := append(slices.Clone(base), tt.args...)
		if !slices.Contains(tt.args, "--url") {
			args = append(args, "--url", "http://svc/mcp")
		}
		out, errs, code := run(t, args...)
		if code != exitUsage || !strings.Contains(errs, tt.want) || out != "" {
			t.Errorf("%v: exit %d, %q, %d bytes out: want exit 2 naming %q and no manifest", tt.args, code, errs, len(out), tt.want)
		}
		if strings.Contains(out+errs, "literal-token") || strings.Contains(out+errs, "k3y") || strings.Contains(out+errs, ":pw@") {
			t.Errorf("%v: the secret is in the output", tt.args)
		}
	}
}

// Kubernetes expands $(NAME) in a container's args: a user's own "$(" is
// written as "$$(" so it reaches mcpbench as typed.
func TestK8sJobEscapesDollarParen(t *testing.T) {
	out, errs, code := run(t, "k8s-job", "--parallelism", "2", "--image", "img", "--url", "http://svc/mcp", "--tool", "echo", "--args", `{"text":"$(HOME)"}`)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	job, _, _ := k8sDocs(t, out)
	args := job.Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, `--args={"text":"$$(HOME)"}`) || !slices.Contains(args, "--segment=$(JOB_COMPLETION_INDEX)/2") {
		t.Fatalf("args %q", args)
	}
}
