#!/usr/bin/env bash
# The conformance suite across three nodes of one bridge: PostgreSQL and Redis (scripts/services.sh), three nodes
# (scripts/cluster-local.sh, test clock on), each scenario's apps and agents placed on different nodes; the
# protocol, bridge, resume and cancel profiles (every resume lands on another node than its event's: R8, and a
# cancel from there is judged by the event's home: S5).
# Reports: test-output/conformance-cluster-<profile>.{json,xml,html}; node logs: test-output/cluster/.
# Exit code as scripts/conformance-local.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

export BRIDGE_TEST_CLOCK=1 CLUSTER_DIR=${CLUSTER_DIR:-test-output/cluster} BASE_PORT=${BASE_PORT:-18180}
export ADMIN_TOKEN=${ADMIN_TOKEN:-conformance-cluster-admin-token}
trap 'bash scripts/cluster-local.sh stop' EXIT
urls=$(bash scripts/cluster-local.sh start | sed 's|^http|ws|; s|$|/v1|' | paste -sd, -)
# The robustness mode runs against one node (conformance-local.sh); across nodes it is not run yet.
SKIP_ROBUSTNESS=1 BRIDGE_URLS=$urls REPORT_NAME=conformance-cluster PROFILES=${PROFILES:-protocol bridge resume cancel} bash scripts/conformance-local.sh "$@"
