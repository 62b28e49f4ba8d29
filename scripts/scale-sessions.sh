#!/usr/bin/env bash
# Hold many MCP sessions, each with a standalone GET stream, from one
# machine: S `mcpbench serve` processes (one open-file limit each) and a
# run split over P child processes (--processes), sessions spread over
# the servers by VU. Loopback only; bounded by --duration.
#
#   scripts/scale-sessions.sh [SESSIONS] [SERVERS] [PROCESSES] [RAMP] [HOLD]
#   scripts/scale-sessions.sh 50000 10 10 50s 30s
#
# The VUs ramp from 0 to SESSIONS over RAMP (k6's ramping VUs: on a small
# machine 50,000 sessions opened at once overflow the servers' accept
# queues), then hold SESSIONS for HOLD.
#
# Each session holds two connections (the GET stream and one for POSTs), so
# a process holds about 2 × its sessions sockets: keep SESSIONS/SERVERS and
# SESSIONS/PROCESSES under half the open-file hard limit (ulimit -Hn).
# Prints the run's summary and each process's peak RSS (KiB per session).
set -euo pipefail
cd "$(dirname "$0")/.."
sessions=${1:-50000} servers=${2:-10} procs=${3:-10} ramp=${4:-50s} hold=${5:-30s}
bin=${MCPBENCH:-$(mktemp -d)/mcpbench}
[ -x "$bin" ] || go build -o "$bin" ./cmd/mcpbench
out=$(mktemp -d)
pids=() urls=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT
for i in $(seq 0 $((servers - 1))); do
  port=$((19100 + i))
  "$bin" serve --addr "127.0.0.1:$port" >"$out/serve-$i.log" 2>&1 &
  pids+=($!)
  urls+=(--url "http://127.0.0.1:$port/mcp")
done
for i in $(seq 0 $((servers - 1))); do   # wait until each server answers
  for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$((19100 + i))/mcp" && break
    sleep 0.1
  done
done
# Closed model: every session runs one echo call per --think-time ($THINK, 300 s) and holds
# its GET stream in between: one call per session while the VUs ramp up.
# --vus 0: the ramp starts from no VU (a stage ramps from --vus), so
# sessions open at SESSIONS/RAMP per second.
/usr/bin/time -v "$bin" run "${urls[@]}" --vus 0 --processes "$procs" --get-stream \
  --tool echo --args '{"text":"hi"}' --think-time "${THINK:-300s}" -s "$ramp:$sessions" -s "$hold:$sessions" --warmup 0s \
  --out "$out/run" 2>"$out/time.txt" | tail -n 40
grep -E "Maximum resident" "$out/time.txt" | sed 's/^\s*/parent+children (largest one): /'
echo "per server (peak RSS KiB):"
for p in "${pids[@]}"; do grep VmHWM "/proc/$p/status" 2>/dev/null || true; done
echo "results in $out/run"
