#!/usr/bin/env bash
# Prints the Python interpreter that can run the Python package (python/): $PYTHON when set, else /usr/bin/python3
# when it can import websockets (Debian's python3-websockets; a pyenv python3 first on PATH usually cannot), else
# python3 when it can. Fails with one line naming the Debian packages when none can.
set -euo pipefail
can() { "$1" -c 'import sys, websockets; sys.exit(sys.version_info < (3, 11))' > /dev/null 2>&1; }
if [ -n "${PYTHON:-}" ]; then
  can "$PYTHON" || { echo "python: PYTHON=$PYTHON cannot import websockets or is older than 3.11 (apt-get install python3 python3-websockets)" >&2; exit 1; }
  echo "$PYTHON"
elif can /usr/bin/python3; then
  echo /usr/bin/python3
elif command -v python3 > /dev/null && can python3; then
  command -v python3
else
  echo 'python: no Python 3.11+ that can import websockets: apt-get install python3 python3-websockets (python3-yaml for YAML configs), or set PYTHON' >&2
  exit 1
fi
