#!/usr/bin/env bash
# check-html.sh — open mcpbench's HTML report in headless Chromium and check it.
#
# Usage:
#   scripts/check-html.sh [SCREENSHOT.png]
#
# Builds mcpbench, makes a short run against the embedded reference server
# (loopback only, 3 s) into a temporary results directory, runs
# `mcpbench plot` on it, opens report.html via file:// in headless
# Chromium (driven by playwright-core) and fails if
#   - the page logs a console error or throws a page error,
#   - it makes any request other than file:// or data: (it must be
#     self-contained),
#   - it lacks the summary table (#summary-table with at least one row),
#   - it has fewer than 3 rendered <svg> charts of non-zero size.
# Then it takes a full-page screenshot (default $TMP/report.png), prints
# its path and exits 0.
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
# plots DIR instead of making a new run; MCPBENCH=BINARY uses that binary
# instead of building one.
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

results=${MCPBENCH_RESULTS:-}
if [[ -z "$results" ]]; then
	results="$TMP/run"
	log "short run into $results"
	"$bin" run --duration 3s -q --out "$results" >"$TMP/run.txt" 2>&1 || {
		cat "$TMP/run.txt" >&2
		exit 1
	}
fi
log "plotting"
"$bin" plot "$results" --html "$TMP/report.html" --out "$TMP/plots" >&2

log "installing playwright-core"
mkdir -p "$TMP/node"
(cd "$TMP/node" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --no-audit --no-fund --no-save playwright-core@1 >&2) ||
	{ log "could not install playwright-core"; exit 3; }

cp "$here/check-html.mjs" "$TMP/node/check.mjs"
mkdir -p "$(dirname "$shot")"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 node "$TMP/node/check.mjs" "$TMP/report.html" "$shot" "$TMP/profile"
echo "$shot"
