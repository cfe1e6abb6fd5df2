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
#   4. the package (.deb for 15, tarball for 18) installed without the build tree,
#      against the psql golden files (scripts/package-test.sh)
#
# On PostgreSQL $PG_MAJOR: 15 (default) or 18 (scripts/pg.sh); .ci/run runs both.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
. scripts/pg.sh

scripts/setup.sh

echo "== 0/4 lints: scripts/lint.sh"
scripts/lint.sh

echo "== 1/4 core: cargo test -p pgprompt-core (no PostgreSQL)"
cargo test -p pgprompt-core --quiet

echo "== 2/4 SQL surface: cargo pgrx test"
cargo pgrx test "pg$PG_MAJOR" --runas postgres --pgdata "/tmp/pgprompt-pgdata-$PG_MAJOR"

echo "== 3/4 psql golden files and client tests"
scripts/client-tests.sh

echo "== 4/4 the package, installed on a clean cluster"
scripts/package-test.sh
echo "== all tests passed (PostgreSQL $PG_MAJOR)"
