#!/usr/bin/env bash
# Cold-build cost of mcpbench against a control (issue "The first hour"):
# `go build ./cmd/mcpbench` and `go build net/http encoding/json crypto/tls`,
# each with an empty GOCACHE and GOMODCACHE (modules come from the Go module
# proxy), and the ratio of the two wall times. Run it on a quiet machine, a
# few times: the ratio moves by about ±0.15 between runs.
#   bash scripts/cold-build.sh [REPO]
set -euo pipefail
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$repo"
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN{printf "%.1f", e-s}'; }
std=$(GOCACHE=$tmp/c1 GOMODCACHE=$tmp/m1 GOFLAGS=-modcacherw secs go build -o /dev/null net/http encoding/json crypto/tls)
mb=$(GOCACHE=$tmp/c2 GOMODCACHE=$tmp/m2 GOFLAGS=-modcacherw secs go build -o "$tmp/mcpbench" ./cmd/mcpbench)
size=$(stat -c %s "$tmp/mcpbench")
awk -v s="$std" -v m="$mb" -v z="$size" 'BEGIN{printf "std %.1f s  mcpbench %.1f s  ratio %.2f  binary %d bytes\n", s, m, m/s, z}'
