#!/usr/bin/env bash
# README command (b): every test tier, on a fresh machine.
#   0. lints: clippy with warnings denied, SAFETY comments on every unsafe block, no
#      function over 80 lines (scripts/lint.sh)
#   1. the core crate's unit, golden, property and fuzz tests (cargo test -p pgprompt-core)
#   2. #[pg_test]s of the SQL surface (cargo pgrx test, as postgres)
#   3. psql golden files (pg_regress; again on a server whose clock reads 2031 in UTC+14,
#      so no golden depends on the date) and client tests (Python: SDK wire types,
#      tiktoken parity, dump/restore, the response loop, quick-starts, ...) against a
#      throwaway cluster
#   4. the package (.deb for 15 and 17, tarball for 18) installed without the build tree,
#      against the psql golden files (scripts/package-test.sh), then what was installed
#      before put back and checked
#
# On PostgreSQL $PG_MAJOR: 15 (default), 17 or 18 (scripts/pg.sh); .ci/run runs the three.
# As root or as a user with sudo; it leaves what was installed before it as it found it
# (the package test puts back the files it replaces).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
. scripts/pg.sh

scripts/setup.sh test

echo "== 0/4 lints: scripts/lint.sh"
scripts/lint.sh

echo "== 1/4 core: cargo test -p pgprompt-core (no PostgreSQL)"
cargo test -p pgprompt-core --quiet

echo "== 2/4 SQL surface: cargo pgrx test"
# Its cluster runs as postgres for root, as the user itself otherwise.
runas=(); [ "$(id -u)" -ne 0 ] || runas=(--runas postgres)
cargo pgrx test "pg$PG_MAJOR" "${runas[@]}" --pgdata "/tmp/pgprompt-pgdata-$PG_MAJOR-$(id -un)"

echo "== 3/4 psql golden files and client tests"
scripts/client-tests.sh

echo "== 4/4 the package, installed on a clean cluster"
scripts/package-test.sh

# What was installed before the package test (the demo's build, or tier 3's) is back: a
# fresh cluster creates the extension from it.
scripts/cluster.sh start
eval "$(scripts/cluster.sh env)"
if ! psql -X -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE pgprompt_left_behind" \
     -c "\\c pgprompt_left_behind" -c "CREATE EXTENSION pgprompt" -c "SELECT prompt.count_tokens('left as found')" >/dev/null; then
  echo "after the tests, CREATE EXTENSION pgprompt fails: they did not leave the machine as they found it" >&2
  scripts/cluster.sh stop; exit 1
fi
scripts/cluster.sh stop
echo "== all tests passed (PostgreSQL $PG_MAJOR); the extension installed before them still creates"
