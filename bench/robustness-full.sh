#!/usr/bin/env bash
# Robustness mode's full run against this repository's bridge (issue 31): every input case in the protocol profile,
# then the resource cases at --scale full (1,200 connections, 1,200 unfinished upgrades, 400 unfinished messages,
# a stalled reader fed 64 MiB, 20,000 events, 10,000 resumes, 2,000 agents), with caps large enough for them. The
# bridge is started here as `npm start` does (embedded SQLite), so its peak memory (VmHWM) can be read at the end.
# Usage: bash bench/robustness-full.sh [extra robustness options]; reports in bench/results/robustness-full.*
# Several minutes; not in CI (CI runs the quick scale through scripts/conformance-local.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/results
mkdir -p "$out"
data=$(mktemp -d)
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
export PORT=$port HOST=127.0.0.1 DATABASE_URL="sqlite:$data/bridge.sqlite" LOG_LEVEL=warn
export ADMIN_TOKEN=robustness-full-admin-token
node bin/bridge.js serve > "$out/robustness-full-bridge.log" 2>&1 &
bridge=$!
trap 'kill $bridge 2>/dev/null || true; wait $bridge 2>/dev/null || true; rm -rf "$data"' EXIT
until curl -fsS "http://127.0.0.1:$port/healthz" > /dev/null 2>&1; do
  kill -0 $bridge 2>/dev/null || { echo "the bridge did not start: see $out/robustness-full-bridge.log"; exit 1; }
  sleep 0.2
done
set +e
node bin/bridge-conformance.js robustness --url "ws://127.0.0.1:$port/v1" --admin-token "$ADMIN_TOKEN" --seed 1 \
  --scale full --max-connections 6000 --max-bytes 600000000 --max-duration-ms 1800000 \
  --report-json "$out/robustness-full.json" --junit "$out/robustness-full.xml" --html "$out/robustness-full.html" "$@" \
  | tee "$out/robustness-full.log" | grep -E '^(caps|FAIL|ERR |requirement|blocked|verdict|canary)|^(ok  |skip) resource\.|^ {7}info:'
code=${PIPESTATUS[0]}
set -e
if [ -r "/proc/$bridge/status" ]; then
  echo "the bridge's peak resident memory: $(awk '/VmHWM/ {print $2, $3}' "/proc/$bridge/status")"
else
  echo "the bridge is gone: it did not survive the run"
fi
exit "$code"
