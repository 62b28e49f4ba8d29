// Package apicheck is a test-only module: its tests check package kube's
// Kubernetes objects against k8s.io/api's types, and the manifests that
// 'mcpbench k8s-job' prints (cmd/mcpbench/testdata/k8s-job) against the
// Kubernetes API with a strict decoder. It has a go.mod of its own so that
// the k8s.io modules are needed here only, never to build mcpbench.
// Run it with: cd internal/kube/apicheck && go test ./...
package apicheck
