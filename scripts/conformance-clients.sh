#!/usr/bin/env bash
# Runs the conformance suite's client role, every scenario (slow ones included), against this repository's own
# clients: the SDK's app client (examples/conformance-app.ts) and the agent connector (examples/conformance-agent.ts),
# in the bridge profile (every check judged), then in the cancel profile (the cancel extension's rules of clients,
# which both opt in to). Both honour BRIDGE_TIME_SCALE, so the heartbeat and backoff run 10 times faster
# (--time-scale 10): the two roles, side by side, take well under a minute instead of about 6 min.
# `node --import tsx`, not npx tsx: every scenario starts the client, and npx costs two more processes a start.
# Reports go to test-output/clients-<role>.{json,xml,html} (bridge profile) and clients-<role>-cancel.{…}. Exit
# code: 0 when every run conforms, else the first non-zero exit of the suite. Extra arguments go to every run (e.g.
# --time-scale 1 for a real-time run).
set -euo pipefail
cd "$(dirname "$0")/.."

out=test-output
mkdir -p "$out"
run() {
  local role=$1 profile=$2 command=$3 name=clients-$1
  [ "$profile" = bridge ] || name+="-$profile"
  node bin/bridge-conformance.js client --role "$role" --command "$command" --time-scale 10 --profile "$profile" \
    --report-json "$out/$name.json" --junit "$out/$name.xml" --html "$out/$name.html" "${@:4}" \
    > "$out/$name.log" 2>&1
}
app='node --import tsx examples/conformance-app.ts'
agent='node --import tsx examples/conformance-agent.ts'
status=0
for profile in bridge cancel; do
  run app "$profile" "$app" "$@" & a=$!
  run agent "$profile" "$agent" "$@" & g=$!
  wait $a || { code=$?; [ "$status" -ne 0 ] || status=$code; }
  wait $g || { code=$?; [ "$status" -ne 0 ] || status=$code; }
done
for log in clients-app clients-agent clients-app-cancel clients-agent-cancel; do
  echo "--- client role, ${log#clients-}: $out/$log.log"
  grep -E '^(FAIL|ERR |HARN|requirement|blocked|baseline|profile|verdict)' "$out/$log.log" || true
done
exit "$status"
