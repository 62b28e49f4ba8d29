#!/usr/bin/env bash
# check-docker.sh — build the container image from the Dockerfile and run it
# against its own embedded reference server for 2 s.
#
# Usage: scripts/check-docker.sh [TAG]   (default mcpbench:check)
#
# Exit status: 0 the image built, runs as non-root and benchmarks; 1 it
# failed; 3 no Docker daemon is reachable here (docker missing, or its
# daemon not running): nothing checked.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-mcpbench:check}
if ! command -v docker >/dev/null 2>&1 || ! docker info >/dev/null 2>&1; then
  echo "check-docker: no Docker daemon here: the image is not checked" >&2
  exit 3
fi
docker build -t "$tag" .
docker run --rm "$tag" version
user=$(docker image inspect -f '{{.Config.User}}' "$tag")
case "$user" in
  ""|root|0|0:0) echo "check-docker: the image runs as '$user', want a non-root user" >&2; exit 1 ;;
esac
docker run --rm "$tag" run --duration 2s --warmup 0s --quiet --no-results
echo "check-docker: $tag builds, runs as $user and benchmarks"
