// k8s.go (once internal/kubejob) builds the manifest 'mcpbench k8s-job' prints: a
// batch/v1 Indexed Job whose pod I runs segment I/N of a test
// ('mcpbench run … --segment=$(JOB_COMPLETION_INDEX)/N --start-at=T
// --out=/results/NAME/segment-$(JOB_COMPLETION_INDEX)'), with a
// ConfigMap carrying a profile file and, on request, the
// PersistentVolumeClaim the pods write their results to. The objects are
// package kube's plain structs; the printed YAML is kube.Marshal's.
//
// Secrets never go into the manifest: CheckSecrets refuses a literal
// credential in the profile's URLs, headers or proxy (they must be
// ${NAME} references, which the pods get from K8sSpec.Secrets).
//
// It only builds (K8sManifest: checked and rendered): the command parses
// the flags, loads the profile and prints. Errors name the k8s-job flag
// of the field at fault.

package launch

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/internal/kube"
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/profiles"
)

// MaxParallelism bounds K8sSpec.Parallelism.
const MaxParallelism = 1024

// Where the pods mount the results claim and the profile's ConfigMap.
const (
	ResultsMount = "/results"
	ProfileMount = "/etc/mcpbench"
)

// K8sSpec is what a manifest is built from: k8s-job's flags, the run's
// command line and the profile.
type K8sSpec struct {
	Parallelism  int      // segments, one pod each: 1 … MaxParallelism
	Image        string   // the container image, with mcpbench on its PATH (required)
	Name         string   // the Job's name, a DNS label of at most 52 characters; results go to /results/NAME/segment-I
	Namespace    string   // "": kubectl's
	Claim        string   // the results PersistentVolumeClaim's name (a DNS label), mounted at ResultsMount
	ClaimSize    string   // a quantity: the claim is added to the manifest (ReadWriteMany); "": it exists already
	StorageClass string   // with ClaimSize: the claim's storage class; "": the cluster's default
	CPU, Memory  string   // quantities: each pod's CPU request, memory request and limit; "": none
	PullPolicy   string   // Always, IfNotPresent or Never; "": the cluster's
	Secrets      []string // Secrets whose keys become the pods' environment (the ${NAME} references)

	StartAt time.Time // the segments' clock (--start-at)
	// RunArgs are the run flags every pod gets ("--name=value" each, as
	// the command rebuilds them), without --segment, --start-at,
	// --out and, when the profile is carried, --profile. A "$(" in them is
	// written "$$(" (Kubernetes expands $(VAR) in args).
	RunArgs []string
	// Profile is --profile as given; ProfileData its file's content,
	// carried in a ConfigMap mounted at ProfileMount (nil: a built-in
	// profile, which the pods have, or none).
	Profile     string
	ProfileData []byte
	// GracefulStop is the test's graceful stop: the pods' termination
	// grace period is it plus 30 s (35 s when 0), for SIGTERM is handled
	// as Ctrl-C (the results are written).
	GracefulStop time.Duration
}

// dnsLabel is a Kubernetes object name usable as a Job's (the pods add a
// suffix, so it is kept short).
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?$`)

// Check checks the Job's own settings that need nothing else (the count,
// the image and the names); Build checks the rest.
func (s *K8sSpec) Check() error {
	switch {
	case s.Parallelism < 1 || s.Parallelism > MaxParallelism:
		return fmt.Errorf("%s %d: want 1 … %d", setting.K8sParallelism, s.Parallelism, MaxParallelism)
	case s.Image == "":
		return fmt.Errorf("%s: the container image to run (with mcpbench on its PATH) is required", setting.K8sImage)
	case !dnsLabel.MatchString(s.Name):
		return fmt.Errorf("%s %q: want a lower-case DNS label of at most 52 characters", setting.K8sName, s.Name)
	case !dnsLabel.MatchString(s.Claim):
		return fmt.Errorf("%s %q: want a lower-case DNS label", setting.K8sClaim, s.Claim)
	}
	return nil
}

// BuildK8sJob checks s and returns the manifest's documents, in order: the
// profile's ConfigMap (when carried), the claim (with ClaimSize), the
// Job. Print them with kube.Marshal.
func BuildK8sJob(s *K8sSpec) ([]any, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	var docs []any
	profileArg := ""
	if s.ProfileData != nil {
		docs = append(docs, &kube.ConfigMap{
			TypeMeta:   kube.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: s.meta(s.Name + "-profile"),
			Data:       map[string]string{filepath.Base(s.Profile): string(s.ProfileData)},
		})
		profileArg = "--profile=" + ProfileMount + "/" + filepath.Base(s.Profile)
	}
	if s.ClaimSize != "" {
		pvc, err := s.claim()
		if err != nil {
			return nil, err
		}
		docs = append(docs, pvc)
	}
	job, err := s.job(profileArg)
	if err != nil {
		return nil, err
	}
	return append(docs, job), nil
}

// claim is the results claim (ClaimSize).
func (s *K8sSpec) claim() (*kube.PersistentVolumeClaim, error) {
	size, err := kube.Quantity(s.ClaimSize)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %v", setting.K8sClaimSize, s.ClaimSize, err)
	}
	pvc := &kube.PersistentVolumeClaim{
		TypeMeta:   kube.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: s.meta(s.Claim),
		Spec: kube.PersistentVolumeClaimSpec{
			AccessModes: []kube.PersistentVolumeAccessMode{kube.ReadWriteMany},
			Resources:   kube.VolumeResourceRequirements{Requests: kube.ResourceList{kube.ResourceStorage: size}},
		},
	}
	if s.StorageClass != "" {
		class := s.StorageClass
		pvc.Spec.StorageClassName = &class
	}
	return pvc, nil
}

func (s *K8sSpec) meta(name string) kube.ObjectMeta {
	return kube.ObjectMeta{Name: name, Namespace: s.Namespace,
		Labels: map[string]string{"app.kubernetes.io/name": "mcpbench", "app.kubernetes.io/instance": s.Name}}
}

// job is the Indexed Job: pod i runs segment i/N of the test.
func (s *K8sSpec) job(profileArg string) (*kube.Job, error) {
	n := strconv.Itoa(s.Parallelism)
	args := []string{"run"}
	for _, a := range s.RunArgs {
		args = append(args, strings.ReplaceAll(a, "$(", "$$(")) // Kubernetes expands $(VAR) in args; $$( is a literal $(
	}
	if profileArg != "" {
		args = append(args, profileArg)
	}
	args = append(args, "--segment=$(JOB_COMPLETION_INDEX)/"+n, "--start-at="+s.StartAt.UTC().Format(time.RFC3339Nano),
		"--out="+ResultsMount+"/"+s.Name+"/segment-$(JOB_COMPLETION_INDEX)", "--quiet")
	c := kube.Container{
		Name:    "mcpbench",
		Image:   s.Image,
		Command: []string{"mcpbench"},
		Args:    args,
		Env: []kube.EnvVar{{Name: "JOB_COMPLETION_INDEX", ValueFrom: &kube.EnvVarSource{
			FieldRef: &kube.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}},
		VolumeMounts: []kube.VolumeMount{{Name: "results", MountPath: ResultsMount}},
	}
	if s.PullPolicy != "" {
		switch pp := kube.PullPolicy(s.PullPolicy); pp {
		case kube.PullAlways, kube.PullIfNotPresent, kube.PullNever:
			c.ImagePullPolicy = pp
		default:
			return nil, fmt.Errorf("%s %q: want Always, IfNotPresent or Never", setting.K8sPullPolicy, s.PullPolicy)
		}
	}
	for _, sec := range s.Secrets {
		if !dnsLabel.MatchString(sec) {
			return nil, fmt.Errorf("%s %q: want a Secret's name", setting.K8sSecrets, sec)
		}
		c.EnvFrom = append(c.EnvFrom, kube.EnvFromSource{SecretRef: &kube.SecretEnvSource{LocalObjectReference: kube.LocalObjectReference{Name: sec}}})
	}
	if err := s.resources(&c); err != nil {
		return nil, err
	}
	volumes := []kube.Volume{{Name: "results", VolumeSource: kube.VolumeSource{PersistentVolumeClaim: &kube.PersistentVolumeClaimVolumeSource{ClaimName: s.Claim}}}}
	if profileArg != "" {
		c.VolumeMounts = append(c.VolumeMounts, kube.VolumeMount{Name: "profile", MountPath: ProfileMount, ReadOnly: true})
		volumes = append(volumes, kube.Volume{Name: "profile", VolumeSource: kube.VolumeSource{
			ConfigMap: &kube.ConfigMapVolumeSource{LocalObjectReference: kube.LocalObjectReference{Name: s.Name + "-profile"}}}})
	}
	parallel, zero := int32(s.Parallelism), int32(0)
	mode := kube.IndexedCompletion
	// SIGTERM is handled as Ctrl-C: the pod gets the graceful stop and
	// its sessions' DELETEs to write its results.
	grace := int64(s.GracefulStop.Seconds()) + 30
	if s.GracefulStop == 0 {
		grace = 35
	}
	meta := s.meta(s.Name)
	return &kube.Job{
		TypeMeta:   kube.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta,
		Spec: kube.JobSpec{
			CompletionMode: &mode,
			Completions:    &parallel,
			Parallelism:    &parallel,
			BackoffLimit:   &zero, // a retried segment would start late and overwrite its results
			Template: kube.PodTemplateSpec{
				ObjectMeta: kube.ObjectMeta{Labels: meta.Labels},
				Spec: kube.PodSpec{
					RestartPolicy:                 kube.RestartPolicyNever,
					TerminationGracePeriodSeconds: &grace,
					Containers:                    []kube.Container{c},
					Volumes:                       volumes,
				},
			},
		},
	}, nil
}

// resources sets the container's requests (and memory limit).
func (s *K8sSpec) resources(c *kube.Container) error {
	if s.CPU == "" && s.Memory == "" {
		return nil
	}
	c.Resources.Requests = kube.ResourceList{}
	if s.CPU != "" {
		q, err := kube.Quantity(s.CPU)
		if err != nil {
			return fmt.Errorf("%s %q: %v", setting.K8sCPU, s.CPU, err)
		}
		c.Resources.Requests[kube.ResourceCPU] = q
	}
	if s.Memory != "" {
		q, err := kube.Quantity(s.Memory)
		if err != nil {
			return fmt.Errorf("%s %q: %v", setting.K8sMemory, s.Memory, err)
		}
		c.Resources.Requests[kube.ResourceMemory] = q
		c.Resources.Limits = kube.ResourceList{kube.ResourceMemory: q}
	}
	return nil
}

// K8sManifest is what 'mcpbench k8s-job' prints: it checks p (the
// profile, every run flag applied) as run would, except that ${NAME}
// references need not be set here (the pods get them from
// --env-from-secret), refuses literal secrets (CheckSecrets, CheckArgs:
// the manifest is printed), and renders s's documents (BuildK8sJob,
// kube.Marshal) with the profile file (profile: --profile as given)
// carried in a ConfigMap and runArgs(carried) as the pods' run flags. It
// says on stderr when the clock starts. Errors are ExitUsage errors.
func K8sManifest(s *K8sSpec, p *profile.Profile, profile string, runArgs func(carried bool) []string, stderr io.Writer) ([]byte, error) {
	if err := checkK8sProfile(p, stderr); err != nil {
		return nil, err
	}
	if len(p.AbortOnFail) > 0 {
		return nil, Usagef("%s (abort_on_fail) with k8s-job: each pod would judge only its own share of the load", setting.AbortOnFail)
	}
	s.GracefulStop, s.Profile, s.ProfileData = p.GracefulStop.D(), profile, profileFile(profile)
	s.RunArgs = runArgs(s.ProfileData != nil)
	if err := CheckArgs(s.RunArgs); err != nil {
		return nil, WithExitCode(ExitUsage, err)
	}
	docs, err := BuildK8sJob(s)
	if err != nil {
		return nil, WithExitCode(ExitUsage, err)
	}
	out, err := kube.Marshal(docs...)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "mcpbench: %d segments; their clock starts at %s (in %v): apply the manifest before then\n", s.Parallelism, s.StartAt.UTC().Format(time.RFC3339), time.Until(s.StartAt).Round(time.Second))
	if p.URL == "" {
		fmt.Fprintf(stderr, "mcpbench: no %s: each pod benchmarks its own embedded reference server\n", setting.URL)
	}
	return out, nil
}

// profileFile is the content of a --profile file, carried in the
// manifest (nil for a built-in profile, or none).
func profileFile(profile string) []byte {
	if _, err := profiles.Read(profile); err == nil {
		return nil
	}
	data, err := os.ReadFile(profile)
	if err != nil {
		return nil // LoadProfile read it a moment ago
	}
	return data
}

// checkK8sProfile checks p as run would, except that ${NAME} references
// need not be set here; literal secrets are refused.
func checkK8sProfile(p *profile.Profile, stderr io.Writer) error {
	if err := CheckSecrets(p); err != nil {
		return WithExitCode(ExitUsage, err)
	}
	pp := *p
	if pp.URL == "" {
		pp.URL = "http://127.0.0.1:1/mcp"
	}
	pp.Defaults()
	var errs []error
	for _, e := range pp.Validate() {
		if !errors.Is(e, secret.ErrUnset) {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return WithExitCode(ExitUsage, &profile.ProfileError{Source: cmp.Or(p.Source, p.Name), Errs: errs})
	}
	if p.Data != nil || slices.ContainsFunc(p.Ops, func(o profile.OpSpec) bool { return o.Data != nil }) {
		fmt.Fprintln(stderr, "mcpbench: the profile reads data files: the pods need them at the same paths (mount them; the manifest carries only the profile)")
	}
	return nil
}
