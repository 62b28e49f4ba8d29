#!/usr/bin/env bash
# proxy-clients.sh — run the official TypeScript SDK client through
# `mcpbench proxy` under each fault of a list, and print, per fault, what
# the client did (its own lines), the proxy's verdicts on it, and the log
# lines that show it (requests, faults, stream ends).
#
# Usage:
#   scripts/proxy-clients.sh [FAULT-SPEC ...]
#
# Without arguments it runs the default list (cuts, a retry hint, resume
# faults, 404, 503). Everything listens on loopback: it builds mcpbench,
# starts `mcpbench serve` on a free port, and for each fault a proxy in
# front of it. Installs @modelcontextprotocol/sdk (TS_SDK_VERSION, default
# latest) with npm in a temporary directory. TS_CLIENT_MODE=terminate makes
# the client end its session with terminateSession() (DELETE) before close. The go-sdk client's runs are
# a Go test: go test ./proxy -run TestGoSDKClientThroughProxy -v.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
srv=""
cleanup() {
	[ -n "$srv" ] && kill -INT "$srv" 2>/dev/null && wait "$srv" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/mcpbench" "$root/cmd/mcpbench"
(cd "$tmp" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund "@modelcontextprotocol/sdk@${TS_SDK_VERSION:-latest}" >/dev/null)
cp "$root/scripts/proxy-ts-client.mjs" "$tmp/"
echo "TypeScript SDK $(node -p "require('$tmp/node_modules/@modelcontextprotocol/sdk/package.json').version"), node $(node --version)"

# listening URL printed by a command started in the background
url_of() {
	for _ in $(seq 100); do
		u=$(grep -o 'listening on http://[^ ]*' "$1" | head -1 | sed 's/listening on //') || true
		[ -n "$u" ] && { echo "$u"; return; }
		sleep 0.05
	done
	echo "no listening line in $1" >&2
	exit 1
}

"$tmp/mcpbench" serve --addr 127.0.0.1:0 >"$tmp/serve.out" 2>&1 &
srv=$!
upstream=$(url_of "$tmp/serve.out")

if [ $# -eq 0 ]; then
	set -- "cut after=2 target=tools/call" \
		"cut after=2 close=fin target=tools/call" \
		"cut before_id target=tools/call" \
		"cut after=2 target=tools/call|retry retry=1500" \
		"cut after=2 target=tools/call|replay mode=too-little" \
		"cut after=2 target=tools/call|replay mode=silent for=1s" \
		"status code=404 target=tools/call" \
		"status code=503 retry_after=1 target=tools/call"
fi
for faults in "$@"; do
	args=()
	IFS='|' read -ra specs <<<"$faults"
	for s in "${specs[@]}"; do args+=(--fault "$s"); done
	log="$tmp/proxy.jsonl"
	"$tmp/mcpbench" proxy --listen 127.0.0.1:0 --upstream "$upstream" "${args[@]}" --log "$log" >"$tmp/proxy.out" 2>&1 &
	px=$!
	url=$(url_of "$tmp/proxy.out")
	echo
	echo "=== $faults"
	node "$tmp/proxy-ts-client.mjs" "$url" ${TS_CLIENT_MODE:-} | sed 's/^/client: /'
	kill -INT "$px"
	wait "$px" || true
	grep -v '^mcpbench proxy listening\|^log ' "$tmp/proxy.out" | sed 's/^/proxy:  /'
	grep -E '"ev":"(request|fault|end)"' "$log" | grep -v '"method":"notifications/initialized"' | sed 's/^/log:    /' | cut -c1-260
done
