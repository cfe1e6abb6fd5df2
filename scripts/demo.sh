#!/usr/bin/env bash
# README command (a): on a fresh Debian 12 or 13 machine, as root or as a user with sudo,
# installs what the demo needs (scripts/setup.sh demo: nothing the tests alone use),
# builds and installs pgprompt into PostgreSQL $PG_MAJOR (15 by default), starts a
# throwaway cluster, loads the example of demo/example.sql and shows it working from psql.
# The cluster stays up afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
. scripts/pg.sh

scripts/setup.sh demo
echo "== building and installing pgprompt (release)" >&2
# PostgreSQL's directories are root's: a user writes them through sudo.
cargo pgrx install --release --pg-config "$PG_CONFIG" ${SUDO:+--sudo} >/dev/null
scripts/cluster.sh start
eval "$(scripts/cluster.sh env)"
psql -X -q -f demo/demo.sql
cat >&2 <<MSG

The demo cluster is still running. Explore it with:
    $(scripts/cluster.sh env); psql
Stop it with:
    scripts/cluster.sh stop
MSG
