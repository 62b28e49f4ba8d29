// Package kube holds the few Kubernetes objects that 'mcpbench k8s-job'
// prints (a batch/v1 Job, a ConfigMap and a PersistentVolumeClaim), as
// plain structs with the JSON names of k8s.io/api's, and prints them as
// sigs.k8s.io/yaml would. It exists so that mcpbench need not compile
// the Kubernetes API machinery (k8s.io/api, k8s.io/apimachinery): a third
// of its cold build, for a manifest printer.
//
// Each type carries only the fields mcpbench sets, with the same JSON
// name and omitempty as in k8s.io/api; a struct field that k8s.io/api
// marshals even when empty (a Job's status, a container's resources) is
// a struct here too, so it prints as {} the same way. The module in
// apicheck/ (its own go.mod, so the k8s.io modules stay out of this one)
// checks both: every field against the k8s.io/api type of the same name,
// and the manifests in cmd/mcpbench/testdata/k8s-job, which must
// strict-decode into the k8s.io/api types and print back to the same
// bytes.
//
// Quantities (ResourceList values) are strings, checked by Quantity and
// kept as the user wrote them (Kubernetes reads "1024Mi" and "1Gi" as the
// same amount).
//
// The types are plain data; Marshal is safe for concurrent use.
package kube

import (
	"bytes"
	"encoding/json"
	"fmt"

	yaml "go.yaml.in/yaml/v2"
)

// TypeMeta is metav1.TypeMeta.
type TypeMeta struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
}

// ObjectMeta is the part of metav1.ObjectMeta mcpbench sets.
type ObjectMeta struct {
	Name      string            `json:"name,omitempty"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// Job is batchv1.Job.
type Job struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       JobSpec   `json:"spec,omitempty"`
	Status     JobStatus `json:"status,omitempty"`
}

// JobStatus is batchv1.JobStatus, always empty here (it prints as {}).
type JobStatus struct{}

// CompletionMode is batchv1.CompletionMode.
type CompletionMode string

// IndexedCompletion is batchv1.IndexedCompletion.
const IndexedCompletion CompletionMode = "Indexed"

// JobSpec is the part of batchv1.JobSpec mcpbench sets.
type JobSpec struct {
	Parallelism    *int32          `json:"parallelism,omitempty"`
	Completions    *int32          `json:"completions,omitempty"`
	BackoffLimit   *int32          `json:"backoffLimit,omitempty"`
	Template       PodTemplateSpec `json:"template"`
	CompletionMode *CompletionMode `json:"completionMode,omitempty"`
}

// PodTemplateSpec is corev1.PodTemplateSpec.
type PodTemplateSpec struct {
	ObjectMeta `json:"metadata,omitempty"`
	Spec       PodSpec `json:"spec,omitempty"`
}

// RestartPolicy is corev1.RestartPolicy.
type RestartPolicy string

// RestartPolicyNever is corev1.RestartPolicyNever.
const RestartPolicyNever RestartPolicy = "Never"

// PodSpec is the part of corev1.PodSpec mcpbench sets.
type PodSpec struct {
	Volumes                       []Volume      `json:"volumes,omitempty"`
	Containers                    []Container   `json:"containers"`
	RestartPolicy                 RestartPolicy `json:"restartPolicy,omitempty"`
	TerminationGracePeriodSeconds *int64        `json:"terminationGracePeriodSeconds,omitempty"`
}

// PullPolicy is corev1.PullPolicy.
type PullPolicy string

// The pull policies (corev1's).
const (
	PullAlways       PullPolicy = "Always"
	PullNever        PullPolicy = "Never"
	PullIfNotPresent PullPolicy = "IfNotPresent"
)

// Container is the part of corev1.Container mcpbench sets.
type Container struct {
	Name            string               `json:"name"`
	Image           string               `json:"image,omitempty"`
	Command         []string             `json:"command,omitempty"`
	Args            []string             `json:"args,omitempty"`
	EnvFrom         []EnvFromSource      `json:"envFrom,omitempty"`
	Env             []EnvVar             `json:"env,omitempty"`
	Resources       ResourceRequirements `json:"resources,omitempty"`
	VolumeMounts    []VolumeMount        `json:"volumeMounts,omitempty"`
	ImagePullPolicy PullPolicy           `json:"imagePullPolicy,omitempty"`
}

// ResourceName is corev1.ResourceName.
type ResourceName string

// The resource names (corev1's).
const (
	ResourceCPU     ResourceName = "cpu"
	ResourceMemory  ResourceName = "memory"
	ResourceStorage ResourceName = "storage"
)

// ResourceList is corev1.ResourceList, with quantities in canonical form.
type ResourceList map[ResourceName]string

// ResourceRequirements is the part of corev1.ResourceRequirements
// mcpbench sets.
type ResourceRequirements struct {
	Limits   ResourceList `json:"limits,omitempty"`
	Requests ResourceList `json:"requests,omitempty"`
}

// EnvVar is corev1.EnvVar.
type EnvVar struct {
	Name      string        `json:"name"`
	Value     string        `json:"value,omitempty"`
	ValueFrom *EnvVarSource `json:"valueFrom,omitempty"`
}

// EnvVarSource is the part of corev1.EnvVarSource mcpbench sets.
type EnvVarSource struct {
	FieldRef *ObjectFieldSelector `json:"fieldRef,omitempty"`
}

// ObjectFieldSelector is corev1.ObjectFieldSelector.
type ObjectFieldSelector struct {
	APIVersion string `json:"apiVersion,omitempty"`
	FieldPath  string `json:"fieldPath"`
}

// EnvFromSource is the part of corev1.EnvFromSource mcpbench sets.
type EnvFromSource struct {
	SecretRef *SecretEnvSource `json:"secretRef,omitempty"`
}

// LocalObjectReference is corev1.LocalObjectReference.
type LocalObjectReference struct {
	Name string `json:"name,omitempty"`
}

// SecretEnvSource is the part of corev1.SecretEnvSource mcpbench sets.
type SecretEnvSource struct {
	LocalObjectReference `json:",inline"`
}

// VolumeMount is the part of corev1.VolumeMount mcpbench sets.
type VolumeMount struct {
	Name      string `json:"name"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
	MountPath string `json:"mountPath"`
}

// Volume is corev1.Volume.
type Volume struct {
	Name         string `json:"name"`
	VolumeSource `json:",inline"`
}

// VolumeSource is the part of corev1.VolumeSource mcpbench sets.
type VolumeSource struct {
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`
	ConfigMap             *ConfigMapVolumeSource             `json:"configMap,omitempty"`
}

// PersistentVolumeClaimVolumeSource is the part of
// corev1.PersistentVolumeClaimVolumeSource mcpbench sets.
type PersistentVolumeClaimVolumeSource struct {
	ClaimName string `json:"claimName"`
}

// ConfigMapVolumeSource is the part of corev1.ConfigMapVolumeSource
// mcpbench sets.
type ConfigMapVolumeSource struct {
	LocalObjectReference `json:",inline"`
}

// ConfigMap is the part of corev1.ConfigMap mcpbench sets.
type ConfigMap struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Data       map[string]string `json:"data,omitempty"`
}

// PersistentVolumeAccessMode is corev1.PersistentVolumeAccessMode.
type PersistentVolumeAccessMode string

// ReadWriteMany is corev1.ReadWriteMany.
const ReadWriteMany PersistentVolumeAccessMode = "ReadWriteMany"

// PersistentVolumeClaim is corev1.PersistentVolumeClaim.
type PersistentVolumeClaim struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       PersistentVolumeClaimSpec   `json:"spec,omitempty"`
	Status     PersistentVolumeClaimStatus `json:"status,omitempty"`
}

// PersistentVolumeClaimStatus is corev1.PersistentVolumeClaimStatus,
// always empty here (it prints as {}).
type PersistentVolumeClaimStatus struct{}

// PersistentVolumeClaimSpec is the part of
// corev1.PersistentVolumeClaimSpec mcpbench sets.
type PersistentVolumeClaimSpec struct {
	AccessModes      []PersistentVolumeAccessMode `json:"accessModes,omitempty"`
	Resources        VolumeResourceRequirements   `json:"resources,omitempty"`
	StorageClassName *string                      `json:"storageClassName,omitempty"`
}

// VolumeResourceRequirements is corev1.VolumeResourceRequirements.
type VolumeResourceRequirements struct {
	Limits   ResourceList `json:"limits,omitempty"`
	Requests ResourceList `json:"requests,omitempty"`
}

// Marshal prints docs as YAML documents separated by "---" lines, each
// as sigs.k8s.io/yaml.Marshal does: encoding/json, then YAML 1.1 (yaml
// v2) with the keys in order. The error is encoding/json's or yaml's.
func Marshal(docs ...any) ([]byte, error) {
	var out bytes.Buffer
	for i, d := range docs {
		j, err := json.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("error marshaling into JSON: %w", err)
		}
		// yaml, unlike encoding/json, keeps a number's type (an int
		// stays an int), as sigs.k8s.io/yaml's JSONToYAML does.
		var obj any
		if err := yaml.Unmarshal(j, &obj); err != nil {
			return nil, err
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(b)
	}
	return out.Bytes(), nil
}
