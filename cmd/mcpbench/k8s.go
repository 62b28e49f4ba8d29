package main

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/kube"
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/profiles"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/cobra"
)

// k8sFlags are k8s-job's own flags (the run flags come with them).
type k8sFlags struct {
	parallelism                      int
	image, name, namespace           string
	claim, claimSize, storageClass   string
	cpu, memory, startAt, pullPolicy string
	startDelay                       time.Duration
	secrets                          []string
}

func newK8sJobCmd() *cobra.Command {
	f := &runFlags{}
	k := &k8sFlags{}
	cmd := &cobra.Command{
		Use:   "k8s-job --parallelism N [run flags]",
		Short: "Print a Kubernetes Indexed Job that runs the test as N segments, one pod each",
		Long: `k8s-job prints a Kubernetes manifest (YAML) that runs a test as N execution
segments in N pods: a batch/v1 Job with completionMode Indexed, whose pod i
runs

  mcpbench run [run flags] --segment=$(JOB_COMPLETION_INDEX)/N --start-at=TIME
               --out=/results/NAME/segment-$(JOB_COMPLETION_INDEX)

so each pod runs its share of the arrival rate, VUs and churn, all on one
clock, and writes its results to the results volume (a PersistentVolumeClaim,
ReadWriteMany so every pod can write; --claim-size adds it to the manifest).
A --profile file is carried in a ConfigMap. Copy the segments' directories out
and merge them with 'mcpbench merge' (the README walks through it).

The clock starts at --start-at (default: --start-delay from now): apply the
manifest before then, leaving time for the pods to be scheduled, pull the image
and set up their sessions; a pod that starts late runs its late ops as late
(or drops them) and says so in its summary. Pods are not retried (a retried
segment would start late and overwrite its results).

Secrets never go into the manifest: write them as ${NAME} in --url, --header
or the profile, and give the pods the environment with --env-from-secret
(a Kubernetes Secret holding NAME). A literal credential is refused.`,
		Example: `  kubectl create secret generic mcp-token --from-literal=TOKEN=...
  mcpbench k8s-job --parallelism 8 --image ghcr.io/you/mcpbench:v1 --claim-size 1Gi \
    --url http://mcp.default.svc:8080/mcp --header 'Authorization: Bearer ${TOKEN}' \
    --env-from-secret mcp-token --rate 20000 --duration 2m --get-stream > job.yaml
  kubectl apply -f job.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			docs, err := k.manifest(cmd, f, time.Now())
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(docs)
			return err
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.MarkHidden("format") // k8s-job prints a manifest; the pods' output is their logs
	fl.MarkHidden("dry-run")
	fl.IntVar(&k.parallelism, "parallelism", 0, "segments, one pod each (required)")
	fl.StringVar(&k.image, "image", "", "container image with mcpbench on its PATH (required)")
	fl.StringVar(&k.name, "name", "mcpbench", "the Job's name (its results go to /results/NAME/segment-I)")
	fl.StringVar(&k.namespace, "namespace", "", "the namespace of the Job (default: kubectl's)")
	fl.StringVar(&k.claim, "claim", "mcpbench-results", "the PersistentVolumeClaim the pods write their results to, mounted at /results")
	fl.StringVar(&k.claimSize, "claim-size", "", "add the claim to the manifest with this size (ReadWriteMany), e.g. 1Gi")
	fl.StringVar(&k.storageClass, "storage-class", "", "with --claim-size: the claim's storage class (one offering ReadWriteMany)")
	fl.StringArrayVar(&k.secrets, "env-from-secret", nil, "a Secret whose keys become the pods' environment, for the ${NAME} references (repeatable)")
	fl.StringVar(&k.cpu, "cpu", "", "CPU request of each pod, e.g. 2")
	fl.StringVar(&k.memory, "memory", "", "memory request and limit of each pod, e.g. 2Gi")
	fl.StringVar(&k.pullPolicy, "image-pull-policy", "", "Always, IfNotPresent or Never (default: the cluster's)")
	fl.StringVar(&k.startAt, "start-at", "", "when the segments' clock starts (RFC 3339, unix seconds or +DURATION; default: --start-delay from now)")
	fl.DurationVar(&k.startDelay, "start-delay", 2*time.Minute, "without --start-at: start the clock this long from now")
	return cmd
}

// dnsLabel is a Kubernetes object name usable as a Job's (the pods add a
// suffix, so it is kept short).
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?$`)

// manifest checks the flags and the profile and renders the documents.
func (k *k8sFlags) manifest(cmd *cobra.Command, f *runFlags, now time.Time) ([]byte, error) {
	set := cmd.Flags().Changed
	switch {
	case k.parallelism < 1 || k.parallelism > maxProcesses:
		return nil, usageError("--parallelism %d: want 1 … %d", k.parallelism, maxProcesses)
	case k.image == "":
		return nil, usageError("--image: the container image to run (with mcpbench on its PATH) is required")
	case !dnsLabel.MatchString(k.name):
		return nil, usageError("--name %q: want a lower-case DNS label of at most 52 characters", k.name)
	case !dnsLabel.MatchString(k.claim):
		return nil, usageError("--claim %q: want a lower-case DNS label", k.claim)
	case set("out") || set("no-results"):
		return nil, usageError("--out, --no-results: each pod writes to /results/%s/segment-I on the claim", k.name)
	}
	startAt, err := parseStartAt(k.startAt, now)
	if err != nil {
		return nil, usageError("%v", err)
	}
	if startAt.IsZero() {
		startAt = now.Add(k.startDelay).Truncate(time.Second)
	}
	p, err := k8sProfile(cmd, f)
	if err != nil {
		return nil, err
	}
	var docs []any
	profileArg := ""
	if cm := k.profileConfigMap(f.profile); cm != nil {
		docs = append(docs, cm)
		profileArg = "--profile=" + profileMount + "/" + filepath.Base(f.profile)
	}
	if k.claimSize != "" {
		pvc, err := k.claimDoc()
		if err != nil {
			return nil, err
		}
		docs = append(docs, pvc)
	}
	job, err := k.job(cmd, p, profileArg, startAt)
	if err != nil {
		return nil, err
	}
	docs = append(docs, job)
	out, err := kube.Marshal(docs...)
	if err != nil {
		return nil, err
	}
	w := cmd.ErrOrStderr()
	fmt.Fprintf(w, "mcpbench: %d segments; their clock starts at %s (in %v): apply the manifest before then\n", k.parallelism, startAt.UTC().Format(time.RFC3339), time.Until(startAt).Round(time.Second))
	if p.URL == "" {
		fmt.Fprintln(w, "mcpbench: no --url: each pod benchmarks its own embedded reference server")
	}
	return out, nil
}

// k8sProfile loads the profile with the flags applied and checks it as run
// would, except that ${NAME} references need not be set here (the pods
// get them from --env-from-secret); literal secrets are refused, since
// the manifest is printed.
func k8sProfile(cmd *cobra.Command, f *runFlags) (*workload.Profile, error) {
	p, err := workload.LoadProfile(f.profile)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if err := applyFlags(p, f, cmd.Flags()); err != nil {
		return nil, usageError("%v", err)
	}
	if err := literalSecrets(p); err != nil {
		return nil, usageError("%v", err)
	}
	if err := literalProxySecret(p); err != nil {
		return nil, usageError("%v", err)
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
		return nil, &exitError{code: exitUsage, err: &workload.ProfileError{Source: cmp.Or(p.Source, p.Name), Errs: errs}}
	}
	if p.Data != nil || slices.ContainsFunc(p.Ops, func(o workload.OpSpec) bool { return o.Data != nil }) {
		fmt.Fprintln(cmd.ErrOrStderr(), "mcpbench: the profile reads data files: the pods need them at the same paths (mount them; the manifest carries only the profile)")
	}
	return p, nil
}

// literalSecrets refuses credentials written out in the URLs or headers
// (they would be printed in the manifest): they must be ${NAME}
// references.
func literalSecrets(p *workload.Profile) error {
	for i, u := range append([]string{p.URL}, p.URLs...) {
		if secret.RedactURL(u) != u && !strings.Contains(u, "${") {
			field := "--url"
			if i > 0 {
				field = "urls[" + strconv.Itoa(i-1) + "]"
			}
			return fmt.Errorf("%s carries a literal credential: write it as ${NAME} and give the pods NAME with --env-from-secret", field)
		}
	}
	for name, v := range p.Headers {
		shown := driver.RedactHeader(http.Header{name: {v}})
		if len(shown) == 1 && strings.HasSuffix(shown[0], secret.Redacted) && !strings.Contains(v, "${") {
			return fmt.Errorf("header %s carries a literal secret: write it as ${NAME} (e.g. 'Authorization: Bearer ${TOKEN}') and give the pods NAME with --env-from-secret", name)
		}
	}
	return nil
}

// profileMount is where a profile file's ConfigMap is mounted.
const profileMount = "/etc/mcpbench"

// profileConfigMap carries a profile file (nil for a built-in profile).
func (k *k8sFlags) profileConfigMap(profile string) *kube.ConfigMap {
	if _, err := profiles.Read(profile); err == nil {
		return nil
	}
	data, err := os.ReadFile(profile)
	if err != nil {
		return nil // LoadProfile read it a moment ago
	}
	return &kube.ConfigMap{
		TypeMeta:   kube.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: k.meta(k.name + "-profile"),
		Data:       map[string]string{filepath.Base(profile): string(data)},
	}
}

// claimDoc is the results claim (--claim-size).
func (k *k8sFlags) claimDoc() (*kube.PersistentVolumeClaim, error) {
	size, err := quantity(k.claimSize)
	if err != nil {
		return nil, usageError("--claim-size %q: %v", k.claimSize, err)
	}
	pvc := &kube.PersistentVolumeClaim{
		TypeMeta:   kube.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: k.meta(k.claim),
		Spec: kube.PersistentVolumeClaimSpec{
			AccessModes: []kube.PersistentVolumeAccessMode{kube.ReadWriteMany},
			Resources:   kube.VolumeResourceRequirements{Requests: kube.ResourceList{kube.ResourceStorage: size}},
		},
	}
	if k.storageClass != "" {
		pvc.Spec.StorageClassName = &k.storageClass
	}
	return pvc, nil
}

func (k *k8sFlags) meta(name string) kube.ObjectMeta {
	return kube.ObjectMeta{Name: name, Namespace: k.namespace,
		Labels: map[string]string{"app.kubernetes.io/name": "mcpbench", "app.kubernetes.io/instance": k.name}}
}
