#!/usr/bin/env bash
# A private PostgreSQL cluster and Redis for tests, CI and development, on ports of their own so that nothing of the
# machine's own services is touched or needed.
#
#   eval "$(bash scripts/services.sh start)"   # starts both (or finds them running) and exports
#                                              # TEST_POSTGRES_URL and TEST_REDIS_URL
#   bash scripts/services.sh stop
#   bash scripts/services.sh status
#
# Settings: PG_PORT (55432), REDIS_PORT (56379), SERVICES_DIR (/tmp/bridge-services: data, sockets, logs),
# PG_BIN (the newest /usr/lib/postgresql/*/bin). Only the export lines go to stdout; everything else to stderr.
set -euo pipefail

PG_PORT=${PG_PORT:-55432}
REDIS_PORT=${REDIS_PORT:-56379}
SERVICES_DIR=${SERVICES_DIR:-/tmp/bridge-services}
PG_DIR=$SERVICES_DIR/postgres
PG_DATA=$PG_DIR/data
REDIS_DIR=$SERVICES_DIR/redis

say() { echo "services: $*" >&2; }
die() { say "$*"; exit 1; }

pg_bin() {
  if [ -n "${PG_BIN:-}" ]; then echo "$PG_BIN"; return; fi
  local newest
  newest=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$newest" ] || die "PostgreSQL is not installed (apt-get install postgresql), or set PG_BIN"
  echo "$newest"
}

# initdb refuses to run as root: as root the cluster belongs to the `postgres` user, otherwise to the caller.
as_owner() {
  if [ "$(id -u)" -ne 0 ]; then "$@"; return; fi
  if command -v runuser >/dev/null; then (cd / && runuser -u postgres -- "$@"); return; fi
  (cd / && su postgres -s /bin/sh -c "$(printf '%q ' "$@")")
}

pg_running() { [ -f "$PG_DATA/PG_VERSION" ] && as_owner "$BIN/pg_ctl" status -D "$PG_DATA" >/dev/null 2>&1; }

redis_running() { command -v redis-cli >/dev/null && [ "$(redis-cli -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; }

psql_admin() { "$BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtAc "$1"; }

start_postgres() {
  mkdir -p "$PG_DIR"
  if [ "$(id -u)" -eq 0 ]; then
    getent passwd postgres >/dev/null || die "no postgres user to own the cluster (initdb refuses root); install the postgresql package"
    chown postgres: "$PG_DIR"
  fi
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    say "creating a PostgreSQL cluster in $PG_DATA"
    # Trust for local connections only: it listens on 127.0.0.1 and is for tests and development.
    as_owner "$BIN/initdb" -D "$PG_DATA" -A trust -U postgres -E UTF8 >"$PG_DIR/initdb.log" 2>&1 \
      || { cat "$PG_DIR/initdb.log" >&2; die "initdb failed"; }
  fi
  if pg_running; then
    say "PostgreSQL already running on 127.0.0.1:$PG_PORT"
  else
    mkdir -p "$PG_DIR/run" && { [ "$(id -u)" -ne 0 ] || chown postgres: "$PG_DIR/run"; }
    as_owner "$BIN/pg_ctl" -D "$PG_DATA" -l "$PG_DIR/postgres.log" -w -t 30 \
      -o "-p $PG_PORT -k $PG_DIR/run -c listen_addresses=127.0.0.1" start >/dev/null \
      || { tail -n 20 "$PG_DIR/postgres.log" >&2; die "PostgreSQL did not start on 127.0.0.1:$PG_PORT (log: $PG_DIR/postgres.log)"; }
    say "PostgreSQL started on 127.0.0.1:$PG_PORT"
  fi
  for _ in $(seq 1 50); do
    "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" && break
    sleep 0.2
  done
  "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" || die "PostgreSQL does not answer on 127.0.0.1:$PG_PORT"
  # CREATEDB: the store tests make a database of their own per test.
  [ "$(psql_admin "SELECT 1 FROM pg_roles WHERE rolname = 'bridge'")" = 1 ] || psql_admin "CREATE ROLE bridge LOGIN CREATEDB"
  [ "$(psql_admin "SELECT 1 FROM pg_database WHERE datname = 'bridge'")" = 1 ] || psql_admin "CREATE DATABASE bridge OWNER bridge"
}

start_redis() {
  if ! command -v redis-server >/dev/null; then
    say "redis-server is not installed (apt-get install redis-server): TEST_REDIS_URL stays unset"
    return 1
  fi
  if redis_running; then
    say "Redis already running on 127.0.0.1:$REDIS_PORT"
    return 0
  fi
  mkdir -p "$REDIS_DIR"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
    --dir "$REDIS_DIR" --pidfile "$REDIS_DIR/redis.pid" --logfile "$REDIS_DIR/redis.log" >&2
  for _ in $(seq 1 50); do
    redis_running && { say "Redis started on 127.0.0.1:$REDIS_PORT"; return 0; }
    sleep 0.2
  done
  tail -n 20 "$REDIS_DIR/redis.log" >&2 || true
  die "Redis does not answer on 127.0.0.1:$REDIS_PORT (log: $REDIS_DIR/redis.log)"
}

stop_all() {
  if pg_running; then
    as_owner "$BIN/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null
    say "PostgreSQL stopped"
  fi
  if redis_running; then
    redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
    say "Redis stopped"
  fi
}

BIN=$(pg_bin)
case "${1:-}" in
  start)
    start_postgres
    echo "export TEST_POSTGRES_URL=postgres://bridge@127.0.0.1:$PG_PORT/bridge"
    if start_redis; then echo "export TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT"; fi
    ;;
  stop) stop_all ;;
  status)
    pg_running && say "PostgreSQL running on 127.0.0.1:$PG_PORT" || say "PostgreSQL not running"
    redis_running && say "Redis running on 127.0.0.1:$REDIS_PORT" || say "Redis not running"
    ;;
  *) die "usage: bash scripts/services.sh start|stop|status" ;;
esac
