package main

import (
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/internal/kube"
	"github.com/mcpbench/mcpbench/internal/procrun"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/cobra"
)

// k8sDrop are the flags k8s-job reads itself, or sets for each pod.
var k8sDrop = func() map[string]bool {
	m := maps.Clone(procrun.ScaleDrop)
	for _, n := range []string{"parallelism", "image", "name", "namespace", "claim", "claim-size", "storage-class", "env-from-secret",
		"cpu", "memory", "image-pull-policy"} {
		m[n] = true
	}
	return m
}()

// resultsMount is where the results claim is mounted in the pods.
const resultsMount = "/results"

// job is the Indexed Job: pod i runs segment i/N of the test.
func (k *k8sFlags) job(cmd *cobra.Command, p *workload.Profile, profileArg string, startAt time.Time) (*kube.Job, error) {
	n := strconv.Itoa(k.parallelism)
	drop := k8sDrop
	if profileArg != "" {
		drop = maps.Clone(k8sDrop)
		drop["profile"] = true
	}
	args := []string{"run"}
	for _, a := range procrun.SegmentArgs(cmd.Flags(), drop) {
		args = append(args, strings.ReplaceAll(a, "$(", "$$(")) // Kubernetes expands $(VAR) in args; $$( is a literal $(
	}
	if profileArg != "" {
		args = append(args, profileArg)
	}
	args = append(args, "--segment=$(JOB_COMPLETION_INDEX)/"+n, "--start-at="+startAt.UTC().Format(time.RFC3339Nano),
		"--out="+resultsMount+"/"+k.name+"/segment-$(JOB_COMPLETION_INDEX)", "--quiet")
	c := kube.Container{
		Name:    "mcpbench",
		Image:   k.image,
		Command: []string{"mcpbench"},
		Args:    args,
		Env: []kube.EnvVar{{Name: "JOB_COMPLETION_INDEX", ValueFrom: &kube.EnvVarSource{
			FieldRef: &kube.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}},
		VolumeMounts: []kube.VolumeMount{{Name: "results", MountPath: resultsMount}},
	}
	if k.pullPolicy != "" {
		switch pp := kube.PullPolicy(k.pullPolicy); pp {
		case kube.PullAlways, kube.PullIfNotPresent, kube.PullNever:
			c.ImagePullPolicy = pp
		default:
			return nil, usageError("--image-pull-policy %q: want Always, IfNotPresent or Never", k.pullPolicy)
		}
	}
	for _, s := range k.secrets {
		if !dnsLabel.MatchString(s) {
			return nil, usageError("--env-from-secret %q: want a Secret's name", s)
		}
		c.EnvFrom = append(c.EnvFrom, kube.EnvFromSource{SecretRef: &kube.SecretEnvSource{LocalObjectReference: kube.LocalObjectReference{Name: s}}})
	}
	if err := k.resources(&c); err != nil {
		return nil, err
	}
	volumes := []kube.Volume{{Name: "results", VolumeSource: kube.VolumeSource{PersistentVolumeClaim: &kube.PersistentVolumeClaimVolumeSource{ClaimName: k.claim}}}}
	if profileArg != "" {
		c.VolumeMounts = append(c.VolumeMounts, kube.VolumeMount{Name: "profile", MountPath: profileMount, ReadOnly: true})
		volumes = append(volumes, kube.Volume{Name: "profile", VolumeSource: kube.VolumeSource{
			ConfigMap: &kube.ConfigMapVolumeSource{LocalObjectReference: kube.LocalObjectReference{Name: k.name + "-profile"}}}})
	}
	parallel, zero := int32(k.parallelism), int32(0)
	mode := kube.IndexedCompletion
	// SIGTERM is handled as Ctrl-C: the pod gets the graceful stop and
	// its sessions' DELETEs to write its results.
	grace := int64(p.GracefulStop.D().Seconds()) + 30
	if p.GracefulStop == 0 {
		grace = 35
	}
	meta := k.meta(k.name)
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
func (k *k8sFlags) resources(c *kube.Container) error {
	if k.cpu == "" && k.memory == "" {
		return nil
	}
	c.Resources.Requests = kube.ResourceList{}
	if k.cpu != "" {
		q, err := quantity(k.cpu)
		if err != nil {
			return usageError("--cpu %q: %v", k.cpu, err)
		}
		c.Resources.Requests[kube.ResourceCPU] = q
	}
	if k.memory != "" {
		q, err := quantity(k.memory)
		if err != nil {
			return usageError("--memory %q: %v", k.memory, err)
		}
		c.Resources.Requests[kube.ResourceMemory] = q
		c.Resources.Limits = kube.ResourceList{kube.ResourceMemory: q}
	}
	return nil
}

// quantity is s if it is a Kubernetes resource quantity, or why not
// (kube.Quantity: the manifest keeps it as written).
func quantity(s string) (string, error) { return kube.Quantity(s) }
