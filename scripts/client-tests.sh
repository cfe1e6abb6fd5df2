#!/usr/bin/env bash
# Test tier 3: installs the extension into PostgreSQL $PG_MAJOR (scripts/pg.sh), starts
# a throwaway cluster as postgres, and runs the psql golden files (pg_regress) and the
# Python client tests (SDK wire types, tiktoken parity, dump and restore, ...) against it.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
. scripts/pg.sh
PG_REGRESS=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress

# The release build (what the package ships, and what its test reuses), overflow checks on.
cargo pgrx install --release --pg-config "$PG_CONFIG" ${SUDO:+--sudo} >/dev/null
scripts/cluster.sh start
trap 'scripts/cluster.sh stop' EXIT
eval "$(scripts/cluster.sh env)"

regress() {
  mkdir -p "$1"
  if ! "$PG_REGRESS" --bindir="$PGBIN" --host="$PGHOST" --port="$PGPORT" --user=postgres \
      --inputdir=tests/regress --outputdir="$1" --dbname=pgprompt_regress \
      --schedule=tests/regress/schedule; then
    cat "$1/regression.diffs" >&2 || true
    exit 1
  fi
}

# The psql golden files, on today's clock, then on a server whose clock and time zone
# are elsewhere (another year, UTC+14): no golden may depend on the date or the zone.
regress target/regress
PGPROMPT_FAKETIME='2031-07-15 23:30:00' TZ=Pacific/Kiritimati scripts/cluster.sh start
echo "== the psql golden files again, on a server whose clock reads 2031-07-15 23:30 (UTC+14)"
regress target/regress-faketime
scripts/cluster.sh start

python3 -m pytest -q tests/python
