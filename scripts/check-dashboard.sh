#!/usr/bin/env bash
# check-dashboard.sh — watch mcpbench's live dashboard (--dashboard) in
# headless Chromium during a run.
#
# Usage:
#   scripts/check-dashboard.sh [SCREENSHOT.png]
#
# Builds mcpbench and starts a 10 s run (1 s warm-up) against the embedded
# reference server with --dashboard on a loopback port, opens the page in
# headless Chromium (driven by playwright-core) and fails if
#   - the page's count of received events (#events-received) was seen to
#     change fewer than 3 times while the run went, or its 5 charts were
#     not drawn (uPlot canvases of non-zero size) with a growing number of
#     points,
#   - the page logs a console error or throws a page error,
#   - it makes any request to another origin than the dashboard's own,
#   - at the end it does not switch to the run's HTML report (/report,
#     with the summary table),
#   - the run does not exit 0.
# It takes a screenshot of the live page during the run (SCREENSHOT.png,
# default $TMP/dashboard.png) and of the report it became
# (*-report.png beside it), prints their paths and exits 0.
#
# Installs what it needs as scripts/check-html.sh does: Debian's chromium
# (apt-get, skipped when /usr/bin/chromium exists; needs root) and
# playwright-core in a temporary directory with npm.
#
# Exit status: 0 the page passed; 1 it failed; 3 the browser tools could
# not be installed.
#
# Environment: KEEP=1 keeps the temporary directory (kept anyway when the
# screenshot is left at its default path inside it); MCPBENCH=BINARY uses
# that binary instead of building one.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mcpbench-dash.XXXXXX")
shot=${1:-$TMP/dashboard.png}
case "$shot" in /*) ;; *) shot="$PWD/$shot" ;; esac
# The temporary directory goes when the screenshot lives elsewhere (or
# KEEP=0); with the default screenshot path it stays, so the screenshot does.
rm_tmp=0
if [[ "${KEEP:-}" == 0 || ( -n "${1:-}" && "${KEEP:-}" != 1 ) ]]; then rm_tmp=1; fi
run_pid=
cleanup() {
	if [[ -n "$run_pid" ]] && kill -0 "$run_pid" 2>/dev/null; then kill "$run_pid" 2>/dev/null || true; fi
	if [[ $rm_tmp == 1 ]]; then rm -rf "$TMP"; fi
}
trap cleanup EXIT

log() { echo "check-dashboard: $*" >&2; }

if [[ ! -x /usr/bin/chromium ]]; then
	log "installing chromium (apt-get)"
	export DEBIAN_FRONTEND=noninteractive
	{ apt-get update -qq >&2 && apt-get install -y -qq chromium >&2; } || { log "could not install chromium"; exit 3; }
fi

log "installing playwright-core"
mkdir -p "$TMP/node"
(cd "$TMP/node" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --no-audit --no-fund --no-save playwright-core@1 >&2) ||
	{ log "could not install playwright-core"; exit 3; }
cp "$here/check-dashboard.mjs" "$TMP/node/check.mjs"

bin=${MCPBENCH:-}
if [[ -z "$bin" ]]; then
	log "building mcpbench"
	(cd "$repo" && go build -o "$TMP/mcpbench" ./cmd/mcpbench)
	bin="$TMP/mcpbench"
fi

log "a 10 s run with --dashboard 127.0.0.1:0 into $TMP/run"
"$bin" run --duration 10s --warmup 1s -q --out "$TMP/run" --dashboard 127.0.0.1:0 >"$TMP/run.txt" 2>&1 &
run_pid=$!
url=
for _ in $(seq 1 100); do # the address it printed (at most 10 s)
	url=$(grep -o 'live dashboard at http://127\.0\.0\.1:[0-9]*/' "$TMP/run.txt" | head -1 | sed 's/^live dashboard at //') || true
	[[ -n "$url" ]] && break
	kill -0 "$run_pid" 2>/dev/null || break
	sleep 0.1
done
if [[ -z "$url" ]]; then
	cat "$TMP/run.txt" >&2
	log "FAIL: the run printed no dashboard address"
	exit 1
fi
log "the page is at $url"

mkdir -p "$(dirname "$shot")"
status=0
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 node "$TMP/node/check.mjs" "$TMP/profile" "$url" "$shot" "${shot%.png}-report.png" || status=$?
run_status=0
wait "$run_pid" || run_status=$?
run_pid=
if [[ $run_status -ne 0 ]]; then
	cat "$TMP/run.txt" >&2
	log "FAIL: the run exited $run_status"
	exit 1
fi
if [[ $status -ne 0 ]]; then
	cat "$TMP/run.txt" >&2
	exit 1
fi
printf '%s\n' "$shot" "${shot%.png}-report.png"
