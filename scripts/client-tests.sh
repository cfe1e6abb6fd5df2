#!/usr/bin/env bash
# Test tier 3: installs the extension into PostgreSQL $PG_MAJOR (scripts/pg.sh), starts
# a throwaway cluster as postgres, and runs the psql golden files (pg_regress) and the
# Python client tests (SDK wire types, tiktoken parity, dump and restore, ...) against it.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
. scripts/pg.sh
PG_REGRESS=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress

cargo pgrx install --pg-config "$PG_CONFIG" >/dev/null
scripts/cluster.sh start
trap 'scripts/cluster.sh stop' EXIT
eval "$(scripts/cluster.sh env)"

mkdir -p target/regress
if ! "$PG_REGRESS" --bindir="$PGBIN" --host="$PGHOST" --port="$PGPORT" --user=postgres \
    --inputdir=tests/regress --outputdir=target/regress --dbname=pgprompt_regress \
    --schedule=tests/regress/schedule; then
  cat target/regress/regression.diffs >&2 || true
  exit 1
fi

python3 -m pytest -q tests/python
