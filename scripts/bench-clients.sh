#!/usr/bin/env bash
# Side by side: what mcpbench, a load generator on the official go-sdk
# client, a raw net/http loop and the floor (a bare-socket loop that only
# writes the request and reads the answer) cost per tools/call for the
# same load against one `mcpbench serve` (SSE answers, 2025-11-25). Builds
# both programs, then runs scripts/benchclients (its flags pass through):
#
#   scripts/bench-clients.sh                      # 2000 calls/s for 10 s, 3 rounds (~3 min)
#   scripts/bench-clients.sh -rate 500 -duration 5s -rounds 5
#   scripts/bench-clients.sh -closed 4            # saturated closed loop, 4 workers each
#   scripts/bench-clients.sh -v                   # every child's figures too
#   scripts/bench-clients.sh -base /tmp/mcpbench-main   # before/after: another build as client "base"
#   scripts/bench-clients.sh -clients mcpbench,floor    # only mcpbench and the floor (a bare-socket loop)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/mcpbench" ./cmd/mcpbench
go build -o "$bin/benchclients" ./scripts/benchclients
"$bin/benchclients" -mcpbench "$bin/mcpbench" "$@"
