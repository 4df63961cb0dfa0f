#!/usr/bin/env bash
# Runs the conformance suite's client role, every scenario (slow ones included), against the Python package's
# clients: the app client (python/examples/conformance_app.py) and the agent connector
# (python/examples/conformance_agent.py), through scripts/conformance-clients.sh (its profiles, both roles side by
# side, on a clock ten times faster). Reports go to test-output/python-<role>[-<profile>].{json,xml,html,log}.
# The interpreter: $PYTHON, else /usr/bin/python3 when it can import websockets (Debian's python3-websockets), else
# python3; none that can is one line naming the Debian packages (scripts/python.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

python=$(bash scripts/python.sh)
export REPORT_NAME=python
export APP_COMMAND="$python python/examples/conformance_app.py" AGENT_COMMAND="$python python/examples/conformance_agent.py"
exec bash scripts/conformance-clients.sh "$@"
