#!/usr/bin/env bash
# Issue 43's ratios for an older commit and this checkout, in one interleaved run on
# one server (not part of the test command; by hand, about 15 minutes):
#
#   bench/against.sh 04e6eff      # the last commit of 0.3.0, before 0.4's work
#   BENCH_WRITE=0 bench/against.sh bf88378   # any other commit: printed, not written
#
# The older commit is built in a worktree of its own (its own target directory) and
# installed beside this checkout's build under another name: the library
# pgprompt_old.so and the extension pgprompt_old, whose control file points its
# MODULE_PATHNAME there. Each build's database is loaded by its own commit's
# bench/bench.py (the same seeded rows), then bench/against.py measures both.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
. scripts/pg.sh
OLD=${1:?usage: bench/against.sh COMMIT}
TREE=/tmp/pgprompt-against-$OLD
OLD_DB=pgprompt_bench_old

scripts/setup.sh
[ -d "$TREE" ] || git worktree add --detach "$TREE" "$OLD" >/dev/null
echo "== building $OLD (release) in $TREE" >&2
(cd "$TREE" && cargo pgrx package --pg-config "$PG_CONFIG" >/dev/null)
PKG=$(find "$TREE/target/release" -maxdepth 1 -type d -name 'pgprompt-pg*' | head -1)
LIBDIR=$("$PG_CONFIG" --pkglibdir)
SHAREDIR=$("$PG_CONFIG" --sharedir)/extension
OLD_VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' "$TREE/Cargo.toml" | head -1)
install -m 755 "$(find "$PKG" -name 'pgprompt.so' | head -1)" "$LIBDIR/pgprompt_old.so"
install -m 644 "$(find "$PKG" -name "pgprompt--$OLD_VERSION.sql" | head -1)" "$SHAREDIR/pgprompt_old--$OLD_VERSION.sql"
sed -e "s|^default_version = .*|default_version = '$OLD_VERSION'|" \
    -e "s|^module_pathname = .*|module_pathname = '\$libdir/pgprompt_old'|" \
    "$TREE/pgprompt.control" > "$SHAREDIR/pgprompt_old.control"

echo "== building and installing this checkout (release)" >&2
cargo pgrx install --release --pg-config "$PG_CONFIG" >/dev/null

OPTS=(shared_buffers=512MB work_mem=64MB max_wal_size=4GB)
scripts/cluster.sh start "${OPTS[@]}"
trap 'scripts/cluster.sh stop' EXIT
eval "$(scripts/cluster.sh env)"

echo "== loading data: $OLD's bench.py into $OLD_DB, this checkout's into pgprompt_bench" >&2
sed -e "s/CREATE EXTENSION pgprompt\"/CREATE EXTENSION pgprompt_old\"/" \
    -e "s/^DB = .*/DB = \"$OLD_DB\"/" "$TREE/bench/bench.py" > "$TREE/bench/bench_old.py"
(cd "$TREE" && python3 -c "import sys; sys.path.insert(0, 'bench'); import bench_old; bench_old.build()")
python3 -c "import sys; sys.path.insert(0, 'bench'); import bench; bench.build()"

echo "== measuring, interleaved" >&2
python3 bench/against.py "$OLD_DB" pgprompt_bench "$OLD" "$(git rev-parse --short HEAD)"
