package main

import (
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// k8sDrop are the flags k8s-job reads itself, or sets for each pod.
var k8sDrop = func() map[string]bool {
	m := maps.Clone(scaleDrop)
	for _, n := range []string{"parallelism", "image", "name", "namespace", "claim", "claim-size", "storage-class", "env-from-secret",
		"cpu", "memory", "image-pull-policy"} {
		m[n] = true
	}
	return m
}()

// resultsMount is where the results claim is mounted in the pods.
const resultsMount = "/results"

// job is the Indexed Job: pod i runs segment i/N of the test.
func (k *k8sFlags) job(cmd *cobra.Command, p *workload.Profile, profileArg string, startAt time.Time) (*batchv1.Job, error) {
	n := strconv.Itoa(k.parallelism)
	drop := k8sDrop
	if profileArg != "" {
		drop = maps.Clone(k8sDrop)
		drop["profile"] = true
	}
	args := []string{"run"}
	for _, a := range segmentArgs(cmd.Flags(), drop) {
		args = append(args, strings.ReplaceAll(a, "$(", "$$(")) // Kubernetes expands $(VAR) in args; $$( is a literal $(
	}
	if profileArg != "" {
		args = append(args, profileArg)
	}
	args = append(args, "--segment=$(JOB_COMPLETION_INDEX)/"+n, "--start-at="+startAt.UTC().Format(time.RFC3339Nano),
		"--out="+resultsMount+"/"+k.name+"/segment-$(JOB_COMPLETION_INDEX)", "--quiet")
	c := corev1.Container{
		Name:    "mcpbench",
		Image:   k.image,
		Command: []string{"mcpbench"},
		Args:    args,
		Env: []corev1.EnvVar{{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}},
		VolumeMounts: []corev1.VolumeMount{{Name: "results", MountPath: resultsMount}},
	}
	if k.pullPolicy != "" {
		switch pp := corev1.PullPolicy(k.pullPolicy); pp {
		case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
			c.ImagePullPolicy = pp
		default:
			return nil, usageError("--image-pull-policy %q: want Always, IfNotPresent or Never", k.pullPolicy)
		}
	}
	for _, s := range k.secrets {
		if !dnsLabel.MatchString(s) {
			return nil, usageError("--env-from-secret %q: want a Secret's name", s)
		}
		c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: s}}})
	}
	if err := k.resources(&c); err != nil {
		return nil, err
	}
	volumes := []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: k.claim}}}}
	if profileArg != "" {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "profile", MountPath: profileMount, ReadOnly: true})
		volumes = append(volumes, corev1.Volume{Name: "profile", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: k.name + "-profile"}}}})
	}
	parallel, zero := int32(k.parallelism), int32(0)
	mode := batchv1.IndexedCompletion
	// SIGTERM is handled as Ctrl-C: the pod gets the graceful stop and
	// its sessions' DELETEs to write its results.
	grace := int64(p.GracefulStop.D().Seconds()) + 30
	if p.GracefulStop == 0 {
		grace = 35
	}
	meta := k.meta(k.name)
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			CompletionMode: &mode,
			Completions:    &parallel,
			Parallelism:    &parallel,
			BackoffLimit:   &zero, // a retried segment would start late and overwrite its results
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					TerminationGracePeriodSeconds: &grace,
					Containers:                    []corev1.Container{c},
					Volumes:                       volumes,
				},
			},
		},
	}, nil
}

// resources sets the container's requests (and memory limit).
func (k *k8sFlags) resources(c *corev1.Container) error {
	if k.cpu == "" && k.memory == "" {
		return nil
	}
	c.Resources.Requests = corev1.ResourceList{}
	if k.cpu != "" {
		q, err := resource.ParseQuantity(k.cpu)
		if err != nil {
			return usageError("--cpu %q: %v", k.cpu, err)
		}
		c.Resources.Requests[corev1.ResourceCPU] = q
	}
	if k.memory != "" {
		q, err := resource.ParseQuantity(k.memory)
		if err != nil {
			return usageError("--memory %q: %v", k.memory, err)
		}
		c.Resources.Requests[corev1.ResourceMemory] = q
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: q}
	}
	return nil
}
