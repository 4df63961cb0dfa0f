#!/usr/bin/env bash
# Runs the conformance suite's client role, every scenario (slow ones included), against the Python package's
# clients: the app client (python/examples/conformance_app.py) and the agent connector
# (python/examples/conformance_agent.py), in the bridge profile (every check judged), side by side, on a clock ten
# times faster (--time-scale 10: both honour BRIDGE_TIME_SCALE). Reports go to test-output/python-<role>.{json,xml,html}
# and the runner's output to test-output/python-<role>.log. Exit code: 0 when both conform, else the first non-zero
# exit of the suite. Extra arguments go to both runs (e.g. --time-scale 1 for a real-time run).
# The interpreter: $PYTHON, else /usr/bin/python3 when it can import websockets (Debian's python3-websockets), else
# python3; none that can is one line naming the Debian packages.
set -euo pipefail
cd "$(dirname "$0")/.."

python=$(bash scripts/python.sh)
out=test-output
mkdir -p "$out"
run() {
  local role=$1 command=$2
  local started=$SECONDS
  node bin/bridge-conformance.js client --role "$role" --command "$command" --time-scale 10 --profile bridge \
    --report-json "$out/python-$role.json" --junit "$out/python-$role.xml" --html "$out/python-$role.html" "${@:3}" \
    > "$out/python-$role.log" 2>&1 || { local rc=$?; echo "took $((SECONDS - started)) s" >> "$out/python-$role.log"; return $rc; }
  echo "took $((SECONDS - started)) s" >> "$out/python-$role.log"
}
run app "$python python/examples/conformance_app.py" "$@" & app=$!
run agent "$python python/examples/conformance_agent.py" "$@" & agent=$!
status=0
wait $app || status=$?
a=$status
wait $agent || status=$?
for role in app agent; do
  echo "--- client role (Python), $role: $out/python-$role.log"
  grep -E '^(FAIL|ERR |HARN|requirement|blocked|baseline|profile|verdict|took)' "$out/python-$role.log" || true
done
[ "$a" -ne 0 ] && exit "$a"
exit "$status"
