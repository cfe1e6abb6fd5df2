#!/usr/bin/env bash
# A throwaway PostgreSQL cluster (of $PG_MAJOR, scripts/pg.sh) for the demo, the psql
# tests and the benchmark.
# PostgreSQL refuses to run as root, so root runs it as the postgres user and anyone else
# as itself (scripts/pg.sh), on a private socket directory and port, listening on no TCP
# address unless asked.
#
#   scripts/cluster.sh start [extra postgres -c options...]
#   scripts/cluster.sh restart [options...]   # same data, new options
#   scripts/cluster.sh stop
#   scripts/cluster.sh env      # prints PGHOST/PGPORT/PGUSER exports for psql
#
# PGPROMPT_FAKETIME='2031-07-15 03:00:00' (with TZ=...) starts the server under Debian's
# libfaketime, its clock moved to that moment (it runs on from there): a date dependence
# in a golden file fails the day it is written.
set -euo pipefail
. "$(dirname "$0")/pg.sh"
DIR=${PGPROMPT_CLUSTER:-/tmp/pgprompt-cluster}
PORT=${PGPROMPT_PORT:-54329}

as_postgres() {
  if [ "$(id -un)" = postgres ]; then "$@"; else as_cluster_user "$@"; fi
}

# Starts the server with pg_ctl's options "$@" (and -w), under faketime when
# PGPROMPT_FAKETIME is set: the server inherits its clock. pg_ctl's own wait compares
# the pid file's start time with its clock, which faketime leaves unequal, so then
# pg_isready waits instead.
pg_ctl_start() {
  if [ -z "${PGPROMPT_FAKETIME:-}" ]; then
    as_postgres "$PGBIN/pg_ctl" "$@" -w start >/dev/null
    return
  fi
  # libfaketime preloaded directly: the faketime wrapper waits for every process it
  # started, the server included. "@" starts the clock there and lets it run.
  lib=$(dpkg -L libfaketime | grep '/libfaketime.so.1$')
  as_postgres env TZ="${TZ:-UTC}" LD_PRELOAD="$lib" FAKETIME="@$PGPROMPT_FAKETIME" \
    "$PGBIN/pg_ctl" "$@" -W start >/dev/null
  for _ in $(seq 1 300); do
    "$PGBIN/pg_isready" -q -h "$DIR" -p "$PORT" && return
    sleep 0.1
  done
  echo "the server did not start under faketime (see $DIR/log)" >&2
  exit 1
}

case "${1:-}" in
  start)
    shift
    "$0" stop
    # A directory another user's run left (root's, run as postgres) is removed with sudo.
    rm -rf "$DIR" 2>/dev/null || $SUDO rm -rf "$DIR"
    mkdir -p "$DIR"
    give_cluster_dir "$DIR"
    as_postgres "$PGBIN/initdb" -D "$DIR/data" -A trust -U postgres --locale=C.UTF-8 --encoding=UTF8 \
      --no-sync >/dev/null
    opts="-p $PORT -k $DIR -c listen_addresses=''"
    for o in "$@"; do opts="$opts -c $o"; done
    pg_ctl_start -D "$DIR/data" -o "$opts" -l "$DIR/log"
    echo "cluster up: psql -h $DIR -p $PORT -U postgres" >&2
    ;;
  restart)
    # Keeps the data; new options (e.g. shared_preload_libraries=pgprompt).
    shift
    as_postgres "$PGBIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null
    opts="-p $PORT -k $DIR -c listen_addresses=''"
    for o in "$@"; do opts="$opts -c $o"; done
    pg_ctl_start -D "$DIR/data" -o "$opts" -l "$DIR/log"
    ;;
  stop)
    # Whatever major started it: a fast shutdown by signal, then wait for it to end; a
    # server that has not ended in 30 s (one asked to stop while it recovers from a
    # crash can hang there) gets an immediate shutdown, never left running.
    if [ -f "$DIR/data/postmaster.pid" ]; then
      pid=$(head -1 "$DIR/data/postmaster.pid")
      kill -INT "$pid" 2>/dev/null || true
      for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      if kill -0 "$pid" 2>/dev/null; then
        echo "the server $pid did not stop in 30 s: immediate shutdown" >&2
        kill -QUIT "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
      fi
    fi
    ;;
  env)
    echo "export PGHOST=$DIR PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres PATH=$PGBIN:\$PATH"
    ;;
  *)
    echo "usage: $0 start [option=value...] | restart [option=value...] | stop | env" >&2
    exit 2
    ;;
esac
