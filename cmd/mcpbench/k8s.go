package main

import (
	"maps"
	"sort"
	"time"

	"github.com/mcpbench/mcpbench/launch"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// k8sFlags are k8s-job's own flags (the run flags come with them): the
// manifest's settings, and when its clock starts.
type k8sFlags struct {
	spec       launch.K8sSpec
	startAt    string
	startDelay time.Duration
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
	s := &k.spec
	fl.IntVar(&s.Parallelism, "parallelism", 0, "segments, one pod each (required)")
	fl.StringVar(&s.Image, "image", "", "container image with mcpbench on its PATH (required)")
	fl.StringVar(&s.Name, "name", "mcpbench", "the Job's name (its results go to /results/NAME/segment-I)")
	fl.StringVar(&s.Namespace, "namespace", "", "the namespace of the Job (default: kubectl's)")
	fl.StringVar(&s.Claim, "claim", "mcpbench-results", "the PersistentVolumeClaim the pods write their results to, mounted at /results")
	fl.StringVar(&s.ClaimSize, "claim-size", "", "add the claim to the manifest with this size (ReadWriteMany), e.g. 1Gi")
	fl.StringVar(&s.StorageClass, "storage-class", "", "with --claim-size: the claim's storage class (one offering ReadWriteMany)")
	fl.StringArrayVar(&s.Secrets, "env-from-secret", nil, "a Secret whose keys become the pods' environment, for the ${NAME} references (repeatable)")
	fl.StringVar(&s.CPU, "cpu", "", "CPU request of each pod, e.g. 2")
	fl.StringVar(&s.Memory, "memory", "", "memory request and limit of each pod, e.g. 2Gi")
	fl.StringVar(&s.PullPolicy, "image-pull-policy", "", "Always, IfNotPresent or Never (default: the cluster's)")
	fl.StringVar(&k.startAt, "start-at", "", "when the segments' clock starts (RFC 3339, unix seconds or +DURATION; default: --start-delay from now)")
	fl.DurationVar(&k.startDelay, "start-delay", 2*time.Minute, "without --start-at: start the clock this long from now")
	return cmd
}

// k8sDrop are the flags k8s-job reads itself, or sets for each pod.
var k8sDrop = func() map[string]bool {
	m := maps.Clone(scaleDrop)
	for _, n := range []string{"parallelism", "image", "name", "namespace", "claim", "claim-size", "storage-class", "env-from-secret",
		"cpu", "memory", "image-pull-policy"} {
		m[n] = true
	}
	return m
}()

// manifest checks the flags and the profile and renders the documents
// (launch.BuildK8sJob).
func (k *k8sFlags) manifest(cmd *cobra.Command, f *runFlags, now time.Time) ([]byte, error) {
	s := &k.spec
	if err := s.Check(); err != nil {
		return nil, usageError("%v", err)
	}
	if set := cmd.Flags().Changed; set("out") || set("no-results") {
		return nil, usageError("--out, --no-results: each pod writes to /results/%s/segment-I on the claim", s.Name)
	}
	startAt, err := launch.ParseStartAt(k.startAt, now)
	if err != nil {
		return nil, usageError("%v", err)
	}
	if startAt.IsZero() {
		startAt = now.Add(k.startDelay).Truncate(time.Second)
	}
	p, err := profile.LoadProfile(f.profile)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	if err := applyFlags(p, f, cmd.Flags()); err != nil {
		return nil, usageError("%v", err)
	}
	s.StartAt = startAt
	return launch.K8sManifest(s, p, f.profile, func(carried bool) []string {
		drop := k8sDrop
		if carried { // the pods read it from its ConfigMap
			drop = maps.Clone(k8sDrop)
			drop["profile"] = true
		}
		return segmentArgs(cmd.Flags(), drop)
	}, cmd.ErrOrStderr())
}

// segmentArgs rebuilds the flags the user gave (those fs visited), as
// one "--name=value" argument each (a repeatable flag once per value),
// leaving out those in drop: the run flags of k8s-job's pods (which add
// their own --segment, --start-at and --out). The order is the flags'
// names', so the same flags give the same arguments. (The children of
// --processes get their parent's resolved profile instead: launch.)
func segmentArgs(fs *pflag.FlagSet, drop map[string]bool) []string {
	var names []string
	fs.Visit(func(f *pflag.Flag) {
		if !drop[f.Name] {
			names = append(names, f.Name)
		}
	})
	sort.Strings(names)
	var out []string
	for _, n := range names {
		f := fs.Lookup(n)
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+n+"="+v)
			}
			continue
		}
		out = append(out, "--"+n+"="+f.Value.String())
	}
	return out
}

// scaleDrop are run's flags a pod's command line sets itself or does
// not take: the segment, its start and results directory, the
// processes and output. Read-only.
var scaleDrop = map[string]bool{
	"segment": true, "segment-sequence": true, "start-at": true, "start-delay": true, "processes": true,
	"out": true, "no-results": true, "quiet": true, "no-progress": true, "json": true, "format": true, "dry-run": true, "cpuprofile": true,
	launch.ChildFileFlag: true,
}
