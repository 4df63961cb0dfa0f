#!/usr/bin/env bash
# Runs the conformance suite's client role, slow scenarios included, against this repository's own clients: the
# SDK's app client (examples/conformance-app.ts) and the agent connector (examples/conformance-agent.ts), in the
# bridge profile (every check judged). The two roles run side by side (each about 6 min, mostly waiting on
# heartbeats and backoff delays). Reports go to test-output/clients-<role>.{json,xml,html}. Exit code: 0 when both
# conform, else the first non-zero exit of the suite.
set -euo pipefail
cd "$(dirname "$0")/.."

out=test-output
mkdir -p "$out"
run() {
  local role=$1 command=$2
  node bin/bridge-conformance.js client --role "$role" --command "$command" --slow --profile bridge \
    --report-json "$out/clients-$role.json" --junit "$out/clients-$role.xml" --html "$out/clients-$role.html" "${@:3}" \
    > "$out/clients-$role.log" 2>&1
}
run app 'npx tsx examples/conformance-app.ts' "$@" & app=$!
run agent 'npx tsx examples/conformance-agent.ts' "$@" & agent=$!
status=0
wait $app || status=$?
a=$status
wait $agent || status=$?
for role in app agent; do echo "--- client role, $role: $out/clients-$role.log"; grep -E '^(FAIL|ERR |requirement|profile|verdict)' "$out/clients-$role.log" || true; done
[ "$a" -ne 0 ] && exit "$a"
exit "$status"
