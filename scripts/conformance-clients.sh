#!/usr/bin/env bash
# Runs the conformance suite's client role, every scenario (slow ones included), against this repository's own
# clients: the SDK's app client (examples/conformance-app.ts) and the agent connector (examples/conformance-agent.ts),
# in the bridge profile (every check judged). Both honour BRIDGE_TIME_SCALE, so the heartbeat and backoff run 10
# times faster (--time-scale 10): the two roles, side by side, take well under a minute instead of about 6 min.
# `node --import tsx`, not npx tsx: every scenario starts the client, and npx costs two more processes a start.
# Reports go to test-output/clients-<role>.{json,xml,html}. Exit code: 0 when both conform, else the first
# non-zero exit of the suite. Extra arguments go to both runs (e.g. --time-scale 1 for a real-time run).
set -euo pipefail
cd "$(dirname "$0")/.."

out=test-output
mkdir -p "$out"
run() {
  local role=$1 command=$2
  node bin/bridge-conformance.js client --role "$role" --command "$command" --time-scale 10 --profile bridge \
    --report-json "$out/clients-$role.json" --junit "$out/clients-$role.xml" --html "$out/clients-$role.html" "${@:3}" \
    > "$out/clients-$role.log" 2>&1
}
run app 'node --import tsx examples/conformance-app.ts' "$@" & app=$!
run agent 'node --import tsx examples/conformance-agent.ts' "$@" & agent=$!
status=0
wait $app || status=$?
a=$status
wait $agent || status=$?
for role in app agent; do echo "--- client role, $role: $out/clients-$role.log"; grep -E '^(FAIL|ERR |HARN|requirement|blocked|baseline|profile|verdict)' "$out/clients-$role.log" || true; done
[ "$a" -ne 0 ] && exit "$a"
exit "$status"
