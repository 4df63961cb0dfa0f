#!/usr/bin/env bash
# Runs the conformance suite's client role, every scenario (slow ones included), against this repository's own
# clients: by default the SDK's app client (examples/conformance-app.ts) and the agent connector
# (examples/conformance-agent.ts); APP_COMMAND and AGENT_COMMAND run others (scripts/conformance-python.sh runs the
# Python package's this way). Each profile of PROFILES (default: bridge, every check judged; then cancel, the cancel
# extension's rules of clients, which both opt in to) runs both roles side by side. The clients honour
# BRIDGE_TIME_SCALE, so the heartbeat and backoff run 10 times faster (--time-scale 10): a profile takes well under a
# minute instead of about 6 min.
# `node --import tsx`, not npx tsx: every scenario starts the client, and npx costs two more processes a start.
# Reports go to test-output/<REPORT_NAME>-<role>.{json,xml,html,log} (REPORT_NAME: clients) for the bridge profile and
# <REPORT_NAME>-<role>-<profile>.{…} for the others; each log ends with the run's time. Exit code: 0 when every run
# conforms, else the first non-zero exit of the suite. Extra arguments go to every run (e.g. --time-scale 1 for a
# real-time run).
set -euo pipefail
cd "$(dirname "$0")/.."

out=test-output
report=${REPORT_NAME:-clients}
app=${APP_COMMAND:-node --import tsx examples/conformance-app.ts}
agent=${AGENT_COMMAND:-node --import tsx examples/conformance-agent.ts}
mkdir -p "$out"
run() {
  local role=$1 profile=$2 command=$3 name=$report-$1 started=$SECONDS code=0
  [ "$profile" = bridge ] || name+="-$profile"
  node bin/bridge-conformance.js client --role "$role" --command "$command" --time-scale 10 --profile "$profile" \
    --report-json "$out/$name.json" --junit "$out/$name.xml" --html "$out/$name.html" "${@:4}" \
    > "$out/$name.log" 2>&1 || code=$?
  echo "took $((SECONDS - started)) s" >> "$out/$name.log"
  return $code
}
status=0
logs=()
for profile in ${PROFILES:-bridge cancel}; do
  run app "$profile" "$app" "$@" & a=$!
  run agent "$profile" "$agent" "$@" & g=$!
  wait $a || { code=$?; [ "$status" -ne 0 ] || status=$code; }
  wait $g || { code=$?; [ "$status" -ne 0 ] || status=$code; }
  suffix=$([ "$profile" = bridge ] || echo "-$profile")
  logs+=("$report-app$suffix" "$report-agent$suffix")
done
for log in "${logs[@]}"; do
  echo "--- client role, ${log#"$report"-}: $out/$log.log"
  grep -E '^(FAIL|ERR |HARN|requirement|blocked|baseline|profile|verdict|took)' "$out/$log.log" || true
done
exit "$status"
