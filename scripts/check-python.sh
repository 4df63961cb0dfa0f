#!/usr/bin/env bash
# Type-checks the Python package (python/) with `mypy --strict`, as CI does: the generated modules
# (python/agent_bridge/_generated, from `npm run gen`) and the hand-written ones must both pass. Needs mypy (Debian's:
# `apt-get install --no-install-recommends mypy`, 1.0.1, which checks against its own /usr/bin/python3); a machine
# without it fails here rather than passing unchecked. Each folder is checked on its own, so a test module and an
# example of the same name do not collide. No cache is written into the working tree.
set -euo pipefail
cd "$(dirname "$0")/../python"

if ! command -v mypy > /dev/null; then
  echo 'check-python: mypy is not installed (apt-get install --no-install-recommends mypy); nothing was checked' >&2
  exit 1
fi
status=0
for target in agent_bridge tests examples; do
  [ -e "$target" ] || continue
  MYPYPATH=. mypy --strict --cache-dir=/dev/null "$target" || status=1
done
exit "$status"
