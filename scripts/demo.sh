#!/usr/bin/env bash
# README command (a): on a fresh machine, installs what is missing, builds and installs
# pgprompt into the local PostgreSQL 15, starts a throwaway cluster, loads the example
# of demo/example.sql and shows it working from psql. The cluster stays up afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
. scripts/pg.sh

scripts/setup.sh
echo "== building and installing pgprompt (release)" >&2
cargo pgrx install --release --pg-config "$PG_CONFIG" >/dev/null
scripts/cluster.sh start
eval "$(scripts/cluster.sh env)"
psql -X -q -f demo/demo.sql
cat >&2 <<MSG

The demo cluster is still running. Explore it with:
    $(scripts/cluster.sh env); psql
Stop it with:
    scripts/cluster.sh stop
MSG
