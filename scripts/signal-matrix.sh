#!/bin/sh
# signal-matrix.sh: the signal matrix of issue 33 item 4, measured. It runs
# cmd/mcpbench's TestSignalTrials, which starts mcpbench as a process (the
# test binary running mcpbench's main) against a loopback reference server
# whose DELETEs never answer (and, in the start phase, whose every request
# hangs), sends each stop signal in each phase, with 1 and 2 processes, and
# records what came out; this prints the trials as a Markdown table:
#
#   signal | phase | --processes | exit | summary.json | segments merged | leftovers
#
# Usage: scripts/signal-matrix.sh [go test flags, e.g. -run 'TestSignalTrials/HUP']
# It exits non-zero when a trial failed (the table is printed anyway).
set -u
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
MCPBENCH_LONG=1 go test ./cmd/mcpbench -run 'TestSignalTrials' -count=1 -v "$@" >"$log" 2>&1
rc=$?
echo '| signal | phase | --processes | exit | summary.json | segments merged | leftovers |'
echo '|---|---|---|---|---|---|---|'
grep -o 'trial|.*' "$log" | sed 's/^trial|/|/' | sort -t'|' -k4,4n -k3,3 -k2,2
if [ $rc -ne 0 ]; then
	grep -E -- '--- FAIL|signal_trials_test.go:[0-9]+: [^t]' "$log" >&2
	echo "signal-matrix: some trials failed (go test exit $rc)" >&2
fi
exit $rc
