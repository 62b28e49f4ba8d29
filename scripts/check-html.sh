#!/usr/bin/env bash
# check-html.sh — open mcpbench's HTML reports (run, sweep, soak) in headless
# Chromium and check them.
#
# Usage:
#   scripts/check-html.sh [SCREENSHOT.png]
#
# Builds mcpbench and, against the embedded reference server (loopback
# only), makes a short run (3 s), a short open-model run that drops most
# of its arrivals (3 s at 200/s on 4 VUs of a 200 ms tool), a short rate
# sweep (3 steps of 5 s, every step run: a loaded machine must not cut it
# short), a short rate sweep whose steps drop arrivals (20 to 200/s on 4
# VUs of a 200 ms tool: a re-check and bisect steps, about 45 s) and a
# short soak (20 s) into temporary results directories, runs
# `mcpbench plot` on each, opens each report.html via file:// in headless
# Chromium (driven by playwright-core) and fails if a page
#   - logs a console error or throws a page error,
#   - makes any request other than file:// or data: (it must be
#     self-contained),
#   - lacks what its kind must show: the run's summary table; the sweep's
#     verdict and step rows; the soak's verdict rows and trend chart; the
#     dropping run's warning and dropped-ops table; the dropping sweep's
#     drop warning and its table of steps that dropped arrivals,
#   - (the two runs) does not show the same verdict, notes, not-applicable
#     lines and warnings (id, cause, remedy) as the terminal printed,
#   - (the two sweeps) does not show the same verdict lines,
#     not-applicable lines and warnings (the sweep's and each step's, with
#     id, cause, remedy) as the sweep's last paragraph on the terminal,
#   - has too few rendered <svg> charts of non-zero size (run 3, sweep 3,
#     soak 5), or fewer captions than charts,
#   - has a table header whose text overflows its cell (over its
#     neighbours),
#   - scrolls sideways at 1280 px.
# Then it takes a full-page screenshot of each (the run's at SCREENSHOT.png,
# default $TMP/report.png; the others beside it as *-drops.png, *-sweep.png,
# *-sweep-drops.png and *-soak.png; the replay ledger table of each alone as *-ledger.png),
# prints their paths and exits 0.
#
# Installs what it needs: Debian's chromium (apt-get, skipped when
# /usr/bin/chromium exists; needs root) and playwright-core in a temporary
# directory with npm (it never downloads a browser of its own).
#
# Exit status: 0 the report passed; 1 it failed the check; 3 the browser
# tools could not be installed.
#
# Environment: KEEP=1 keeps the temporary directory (kept anyway when the
# screenshot is left at its default path inside it); MCPBENCH_RESULTS=DIR
# checks only DIR's report (a run, a sweep or a soak directory) instead of
# making new ones; MCPBENCH=BINARY uses that binary instead of building
# one.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mcpbench-html.XXXXXX")
shot=${1:-$TMP/report.png}
case "$shot" in /*) ;; *) shot="$PWD/$shot" ;; esac
# The temporary directory goes when the screenshot lives elsewhere (or
# KEEP=0); with the default screenshot path it stays, so the screenshot does.
if [[ "${KEEP:-}" == 0 || ( -n "${1:-}" && "${KEEP:-}" != 1 ) ]]; then
	trap 'rm -rf "$TMP"' EXIT
fi

log() { echo "check-html: $*" >&2; }

# Exit status 3 means "could not install the browser tools" (no root, no
# network to the registries), as opposed to a report that fails the check.
if [[ ! -x /usr/bin/chromium ]]; then
	log "installing chromium (apt-get)"
	export DEBIAN_FRONTEND=noninteractive
	{ apt-get update -qq >&2 && apt-get install -y -qq chromium >&2; } || { log "could not install chromium"; exit 3; }
fi

bin=${MCPBENCH:-}
if [[ -z "$bin" ]]; then
	log "building mcpbench"
	(cd "$repo" && go build -o "$TMP/mcpbench" ./cmd/mcpbench)
	bin="$TMP/mcpbench"
fi
if ! "$bin" plot --help >/dev/null 2>&1; then
	log "$bin has no plot command"
	exit 1
fi

# kind names a results directory: sweep (sweep.json), soak (soak.json) or run.
kind() {
	if [[ -f "$1/sweep.json" ]]; then echo sweep; elif [[ -f "$1/soak.json" ]]; then echo soak; else echo run; fi
}

shots=()
checks=()
add_job() { # DIR SCREENSHOT [KIND [TERMINAL.txt]]
	local k=${3:-}
	[[ -n "$k" ]] || k=$(kind "$1")
	log "plotting the $k in $1"
	"$bin" plot "$1" --html "$TMP/$k.html" --out "$TMP/plots-$k" >&2
	checks+=("$k=$TMP/$k.html=$2${4:+=$4}")
	shots+=("$2")
}

if [[ -n "${MCPBENCH_RESULTS:-}" ]]; then
	add_job "$MCPBENCH_RESULTS" "$shot"
else
	log "short run into $TMP/run"
	"$bin" run --duration 3s -q --out "$TMP/run" >"$TMP/run.txt" 2>&1 || { cat "$TMP/run.txt" >&2; exit 1; }
	log "short run that drops most arrivals into $TMP/drops"
	"$bin" run --duration 3s --warmup 0s --rate 200 --vus 2 --max-vus 4 --tool slow --args '{"ms":200}' -q --out "$TMP/drops" \
		>"$TMP/drops.txt" 2>&1 || { cat "$TMP/drops.txt" >&2; exit 1; }
	log "short sweep into $TMP/sweep"
	"$bin" sweep --by rate --from 100 --to 300 --steps 3 --step 5s --step-warmup 1s --keep-going --slo-p99 2s --tool echo --args '{"text":"hi"}' -q --out "$TMP/sweep" \
		>"$TMP/sweep.txt" 2>"$TMP/sweep.err" || { cat "$TMP/sweep.txt" "$TMP/sweep.err" >&2; exit 1; }
	log "short sweep whose steps drop arrivals into $TMP/sweep-drops"
	"$bin" sweep --by rate --from 20 --to 200 --steps 2 --step 3s --step-warmup 0s --keep-going --slo-p99 2s --vus 2 --max-vus 4 --tool slow --args '{"ms":200}' -q \
		--out "$TMP/sweep-drops" >"$TMP/sweep-drops.txt" 2>"$TMP/sweep-drops.err" || { cat "$TMP/sweep-drops.txt" "$TMP/sweep-drops.err" >&2; exit 1; }
	log "short soak into $TMP/soak"
	"$bin" soak --duration 20s --warmup 2s -q --out "$TMP/soak" >"$TMP/soak.txt" 2>&1 || {
		status=$?
		# 99: a verdict failed — the report must still show it.
		if [[ $status -ne 99 ]]; then cat "$TMP/soak.txt" >&2; exit 1; fi
	}
	add_job "$TMP/run" "$shot" run "$TMP/run.txt"
	add_job "$TMP/drops" "${shot%.png}-drops.png" drops "$TMP/drops.txt"
	add_job "$TMP/sweep" "${shot%.png}-sweep.png" sweep "$TMP/sweep.txt"
	add_job "$TMP/sweep-drops" "${shot%.png}-sweep-drops.png" sweep-drops "$TMP/sweep-drops.txt"
	add_job "$TMP/soak" "${shot%.png}-soak.png"
fi

log "installing playwright-core"
mkdir -p "$TMP/node"
(cd "$TMP/node" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --no-audit --no-fund --no-save playwright-core@1 >&2) ||
	{ log "could not install playwright-core"; exit 3; }

cp "$here/check-html.mjs" "$TMP/node/check.mjs"
mkdir -p "$(dirname "$shot")"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 node "$TMP/node/check.mjs" "$TMP/profile" "${checks[@]}"
printf '%s\n' "${shots[@]}"
