#!/usr/bin/env bash
# Three bridge nodes on this machine as one bridge: PostgreSQL and Redis from scripts/services.sh, nodes n1..n3 on
# ports BASE_PORT+1.. (8081-8083 by default). What the cluster tests and the conformance run across nodes use, and
# a way for a person to try several nodes.
#
#   bash scripts/cluster-local.sh start     # prints the nodes' URLs (stdout: one http://… per line)
#   bash scripts/cluster-local.sh stop
#   bash scripts/cluster-local.sh status
#
# Settings: NODES (3), BASE_PORT (8080), CLUSTER_DIR (/tmp/bridge-cluster: logs and pids), ADMIN_TOKEN
# (cluster-local-admin-token), BRIDGE_TEST_CLOCK (0), LOG_LEVEL (warn), and those of scripts/services.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

NODES=${NODES:-3}
BASE_PORT=${BASE_PORT:-8080}
CLUSTER_DIR=${CLUSTER_DIR:-/tmp/bridge-cluster}
export ADMIN_TOKEN=${ADMIN_TOKEN:-cluster-local-admin-token}

say() { echo "cluster: $*" >&2; }

alive() { [ -f "$CLUSTER_DIR/n$1.pid" ] && kill -0 "$(cat "$CLUSTER_DIR/n$1.pid")" 2>/dev/null; }

wait_ready() {
  local url=$1 log=$2
  for _ in $(seq 1 150); do
    if curl -fsS "$url/readyz" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  say "a node did not become ready: $url (log: $log)"
  tail -n 5 "$log" >&2 || true
  return 1
}

start() {
  mkdir -p "$CLUSTER_DIR"
  eval "$(bash scripts/services.sh start)"
  [ -n "${TEST_REDIS_URL:-}" ] || { say "Redis is not running (install redis-server)"; exit 1; }
  for i in $(seq 1 "$NODES"); do
    local port=$((BASE_PORT + i))
    if alive "$i"; then say "n$i already running on port $port"; echo "http://127.0.0.1:$port"; continue; fi
    PORT=$port HOST=127.0.0.1 NODE_ID="n$i" DATABASE_URL="$TEST_POSTGRES_URL" REDIS_URL="$TEST_REDIS_URL" \
      BRIDGE_TEST_CLOCK=${BRIDGE_TEST_CLOCK:-0} LOG_LEVEL=${LOG_LEVEL:-warn} \
      nohup node bin/bridge.js serve > "$CLUSTER_DIR/n$i.log" 2>&1 &
    echo $! > "$CLUSTER_DIR/n$i.pid"
  done
  for i in $(seq 1 "$NODES"); do
    local port=$((BASE_PORT + i))
    wait_ready "http://127.0.0.1:$port" "$CLUSTER_DIR/n$i.log"
    echo "http://127.0.0.1:$port"
  done
  say "$NODES nodes ready (admin token: $ADMIN_TOKEN; logs in $CLUSTER_DIR)"
}

stop() {
  for pidfile in "$CLUSTER_DIR"/n*.pid; do
    [ -f "$pidfile" ] || continue
    local pid
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$pidfile"
  done
  say "nodes stopped (PostgreSQL and Redis keep running: bash scripts/services.sh stop)"
}

status() {
  for i in $(seq 1 "$NODES"); do
    if alive "$i"; then echo "n$i: running, http://127.0.0.1:$((BASE_PORT + i))"; else echo "n$i: stopped"; fi
  done
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
