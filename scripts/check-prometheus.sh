#!/usr/bin/env bash
# check-prometheus.sh — a real Prometheus scrapes a real run and receives
# its remote-write pushes, and says what the summary says, both ways.
#
# Usage:
#   scripts/check-prometheus.sh
#
# Installs Debian's prometheus package when the prometheus binary is
# missing (apt-get; needs root), starts it on loopback with a scrape
# configuration pointing at mcpbench (every 1 s) and its remote-write
# receiver on (--web.enable-remote-write-receiver), makes a 30 s
# open-model run of mcpbench against its embedded reference server with
# --prometheus on loopback (and --prometheus-linger, so the last counts are
# scraped) and --prometheus-rw pushing to that Prometheus's
# /api/v1/write, then asks Prometheus over its HTTP API
# (scripts/promcheck), once for the scraped series
# (instance="127.0.0.1:METRICS_PORT") and once for the pushed ones
# (instance=the host name):
#   - sum(rate(mcpbench_ops_total[20s])) inside the measured window must be
#     within 1 % of the summary's op rate;
#   - the final totals (ops, errors, the duration histogram's count) must
#     equal the summary's exactly.
#
# Exit status: 0 Prometheus agrees, both ways; 1 it does not (or the run failed);
# 3 skipped: the prometheus package could not be installed here (a clear
# message says so).
#
# Environment: PROM_PORT (default 19090) and METRICS_PORT (default 19464)
# choose the loopback ports; KEEP=1 keeps the temporary directory;
# MCPBENCH=BINARY uses that binary instead of building one.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mcpbench-prom.XXXXXX")
prom_pid=""
cleanup() {
	if [[ -n "$prom_pid" ]]; then kill "$prom_pid" 2>/dev/null || true; wait "$prom_pid" 2>/dev/null || true; fi
	[[ "${KEEP:-}" == 1 ]] || rm -rf "$TMP"
}
trap cleanup EXIT
log() { echo "check-prometheus: $*" >&2; }

prom=$(command -v prometheus || true)
if [[ -z "$prom" ]]; then
	log "installing Debian's prometheus package (apt-get)"
	export DEBIAN_FRONTEND=noninteractive
	if ! { apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends prometheus >&2; }; then
		log "SKIPPED: the prometheus package could not be installed here (no root, or no package repository)"
		exit 3
	fi
	# The package may start its own service on :9090; ours runs apart.
	prom=$(command -v prometheus || true)
	if [[ -z "$prom" ]]; then
		log "SKIPPED: the prometheus package installed no prometheus binary"
		exit 3
	fi
fi
log "$("$prom" --version 2>&1 | head -1)"

prom_port=${PROM_PORT:-19090}
metrics_port=${METRICS_PORT:-19464}
cat >"$TMP/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: mcpbench
    scrape_interval: 1s
    scrape_timeout: 900ms
    static_configs:
      - targets: ['127.0.0.1:$metrics_port']
YAML
log "starting Prometheus on 127.0.0.1:$prom_port"
"$prom" --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/data" --web.enable-remote-write-receiver \
	--web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$TMP/prometheus.log" 2>&1 &
prom_pid=$!
for _ in $(seq 1 100); do
	if curl -fsS "http://127.0.0.1:$prom_port/-/ready" >/dev/null 2>&1; then break; fi
	if ! kill -0 "$prom_pid" 2>/dev/null; then cat "$TMP/prometheus.log" >&2; log "Prometheus did not start"; exit 1; fi
	sleep 0.2
done
curl -fsS "http://127.0.0.1:$prom_port/-/ready" >/dev/null || { log "Prometheus not ready"; exit 1; }

bin=${MCPBENCH:-}
if [[ -z "$bin" ]]; then
	log "building mcpbench"
	(cd "$repo" && go build -o "$TMP/mcpbench" ./cmd/mcpbench)
	bin="$TMP/mcpbench"
fi
rw_url="http://127.0.0.1:$prom_port/api/v1/write"
log "30 s run at 200 ops/s with --prometheus 127.0.0.1:$metrics_port and --prometheus-rw $rw_url"
"$bin" run --tool echo --args '{"text":"prometheus"}' --rate 200 --duration 30s --warmup 2s -q \
	--prometheus "127.0.0.1:$metrics_port" --prometheus-linger 10s --prometheus-rw "$rw_url" \
	--out "$TMP/run" >"$TMP/run.txt" 2>&1 || {
	cat "$TMP/run.txt" >&2
	log "the run failed"
	exit 1
}
grep -E "^(all|tools/call)|Throughput|prometheus-rw" "$TMP/run.txt" >&2 || true
(cd "$repo" && go build -o "$TMP/promcheck" ./scripts/promcheck)
status=0
log "asking Prometheus: the scraped series"
"$TMP/promcheck" -prometheus "http://127.0.0.1:$prom_port" -results "$TMP/run" -match "instance=\"127.0.0.1:$metrics_port\"" || status=1
# mcpbench labels its pushed series instance=os.Hostname(): the kernel's
# node name, as uname -n says it.
log "asking Prometheus: the remote-written series"
"$TMP/promcheck" -prometheus "http://127.0.0.1:$prom_port" -results "$TMP/run" -match "instance=\"$(uname -n)\"" || status=1
exit $status
