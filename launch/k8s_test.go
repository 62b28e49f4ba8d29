package launch

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/internal/kube"
	"github.com/mcpbench/mcpbench/profile"
)

var startAt = time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)

// spec is the settings k8s-job's flags give by default.
func spec() *K8sSpec {
	return &K8sSpec{Parallelism: 1, Image: "img", Name: "mcpbench", Claim: "mcpbench-results", StartAt: startAt}
}

// The defaults print byte for byte the manifest k8s-job's golden test
// keeps for 'k8s-job --parallelism 1 --image img' (which the module
// internal/kube/apicheck checks against k8s.io/api).
func TestBuildMinimalIsGolden(t *testing.T) {
	docs, err := BuildK8sJob(spec())
	if err != nil {
		t.Fatal(err)
	}
	got, err := kube.Marshal(docs...)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "cmd", "mcpbench", "testdata", "k8s-job", "minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("the manifest (-golden +got):\n%s", diff)
	}
}

// Every setting lands where Kubernetes reads it: the profile file in a
// ConfigMap the pods mount (and --profile pointing there), the claim with
// its size and class, the pods' requests and memory limit, the secrets'
// environment, the grace period past the graceful stop, and a user's
// "$(" escaped in the args.
func TestBuildEverySetting(t *testing.T) {
	s := spec()
	s.Parallelism, s.Name, s.Namespace, s.Claim, s.ClaimSize, s.StorageClass = 4, "load", "bench", "res", "2Gi", "nfs"
	s.CPU, s.Memory, s.PullPolicy, s.Secrets = "500m", "1Gi", "IfNotPresent", []string{"tok"}
	s.RunArgs = []string{`--args={"text":"$(HOME)"}`, "--rate=10"}
	s.Profile, s.ProfileData = "dir/load.yaml", []byte("name: load\n")
	s.GracefulStop = 10 * time.Second
	docs, err := BuildK8sJob(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 {
		t.Fatalf("%d documents, want ConfigMap, claim, Job", len(docs))
	}
	cm, pvc, job := docs[0].(*kube.ConfigMap), docs[1].(*kube.PersistentVolumeClaim), docs[2].(*kube.Job)
	if cm.Name != "load-profile" || cm.Namespace != "bench" || cm.Data["load.yaml"] != "name: load\n" {
		t.Errorf("ConfigMap %+v", cm)
	}
	if pvc.Name != "res" || pvc.Spec.Resources.Requests[kube.ResourceStorage] != "2Gi" || *pvc.Spec.StorageClassName != "nfs" {
		t.Errorf("claim %+v", pvc)
	}
	pod := job.Spec.Template.Spec
	c := pod.Containers[0]
	want := []string{"run", `--args={"text":"$$(HOME)"}`, "--rate=10", "--profile=/etc/mcpbench/load.yaml", "--segment=$(JOB_COMPLETION_INDEX)/4",
		"--start-at=2026-11-21T06:00:00Z", "--out=/results/load/segment-$(JOB_COMPLETION_INDEX)", "--quiet"}
	if diff := cmp.Diff(want, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if *job.Spec.Parallelism != 4 || *job.Spec.Completions != 4 || *job.Spec.BackoffLimit != 0 || *pod.TerminationGracePeriodSeconds != 40 {
		t.Errorf("parallelism %d, completions %d, backoff %d, grace %d; want 4, 4, 0, 40 s", *job.Spec.Parallelism, *job.Spec.Completions, *job.Spec.BackoffLimit, *pod.TerminationGracePeriodSeconds)
	}
	if c.Resources.Requests[kube.ResourceCPU] != "500m" || c.Resources.Limits[kube.ResourceMemory] != "1Gi" || c.ImagePullPolicy != kube.PullIfNotPresent {
		t.Errorf("resources %+v, pull policy %q", c.Resources, c.ImagePullPolicy)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef.Name != "tok" || len(pod.Volumes) != 2 || pod.Volumes[1].ConfigMap.Name != "load-profile" {
		t.Errorf("env from %+v, volumes %+v", c.EnvFrom, pod.Volumes)
	}
}

// A bad setting is refused, naming its setting (the CLI says its flag).
func TestBuildRefuses(t *testing.T) {
	for _, tt := range []struct {
		set  func(*K8sSpec)
		want string
	}{
		{func(s *K8sSpec) { s.Parallelism = 0 }, "launch.K8sSpec.Parallelism 0"},
		{func(s *K8sSpec) { s.Parallelism = MaxParallelism + 1 }, "launch.K8sSpec.Parallelism 1025"},
		{func(s *K8sSpec) { s.Image = "" }, "launch.K8sSpec.Image"},
		{func(s *K8sSpec) { s.Name = "Bad_Name" }, "launch.K8sSpec.Name"},
		{func(s *K8sSpec) { s.Claim = "-x" }, "launch.K8sSpec.Claim"},
		{func(s *K8sSpec) { s.ClaimSize = "lots" }, "launch.K8sSpec.ClaimSize"},
		{func(s *K8sSpec) { s.CPU = "many" }, "launch.K8sSpec.CPU"},
		{func(s *K8sSpec) { s.Memory = "1 GB" }, "launch.K8sSpec.Memory"},
		{func(s *K8sSpec) { s.PullPolicy = "Sometimes" }, "launch.K8sSpec.PullPolicy"},
		{func(s *K8sSpec) { s.Secrets = []string{"Not A Name"} }, "launch.K8sSpec.Secrets"},
	} {
		s := spec()
		tt.set(s)
		if _, err := BuildK8sJob(s); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Build = %v, want an error naming %s", err, tt.want)
		}
	}
}

// Literal credentials in the URLs, headers or proxy are refused without
// being shown; ${NAME} references pass.
func TestCheckSecrets(t *testing.T) {
	for _, tt := range []struct {
		p    profile.Profile
		want string // "": accepted
	}{
		{profile.Profile{URL: "http://svc/mcp", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}}, ""},
		{profile.Profile{URL: "http://svc/mcp", Proxy: "http://u:${PW}@proxy:3128"}, ""},
		{profile.Profile{URL: "http://user:pw1@svc/mcp"}, "profile.Profile.URL carries a literal credential"},
		{profile.Profile{URL: "http://svc/mcp", URLs: []string{"http://a/mcp", "http://u:pw2@b/mcp"}}, "urls[1]"},
		{profile.Profile{URL: "http://svc/mcp", Headers: map[string]string{"Authorization": "Bearer tok3n"}}, "header Authorization"},
		{profile.Profile{URL: "http://svc/mcp", Proxy: "http://u:pw4@proxy:3128"}, "httpclient.Options.Proxy"},
		{profile.Profile{URL: "http://u:pw5@svc/mcp?x=${X}"}, "profile.Profile.URL carries a literal credential"}, // a reference elsewhere does not excuse it
		{profile.Profile{URL: "http://svc/mcp", Env: map[string]string{"API_TOKEN": "pw6"}}, "env API_TOKEN"},
		{profile.Profile{URL: "http://svc/mcp", Env: map[string]string{"API_TOKEN": "${TOKEN}", "TENANT": "acme"}}, ""},
	} {
		err := CheckSecrets(&tt.p)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v", tt.p, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: %v, want an error naming %s", tt.p, err, tt.want)
		case err != nil && (strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "tok3n")):
			t.Errorf("%+v: the error shows the secret: %v", tt.p, err)
		}
	}
	if err := CheckSecrets(&profile.Profile{Proxy: "http://u:pw@p:1"}); !errors.Is(err, ErrProxySecret) {
		t.Errorf("a proxy password: %v, want ErrProxySecret", err)
	}
}

// CheckArgs refuses a written-out credential in any URL-valued argument,
// naming the flag only; references and plain URLs pass.
func TestCheckArgs(t *testing.T) {
	ok := []string{"--url=http://svc/mcp", "--prometheus-rw=http://prom:9090/api/v1/write", "--header=Authorization: Bearer ${TOKEN}",
		"--prometheus-rw=http://prom/w?api_key=${KEY}", "--rate=50"}
	if err := CheckArgs(ok); err != nil {
		t.Errorf("CheckArgs(%q) = %v", ok, err)
	}
	for _, a := range []string{"--prometheus-rw=http://prom/w?api_key=pw7", "--oauth-issuer=https://u:pw8@as.example", `--args={"u":"http://h/?token=pw9"}`} {
		err := CheckArgs(append(slices.Clone(ok), a))
		name, _, _ := strings.Cut(a, "=")
		if err == nil || !strings.HasPrefix(err.Error(), name+" carries a literal credential") || strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: %v, want the refusal naming %s, without the secret", a, err, name)
		}
	}
}
