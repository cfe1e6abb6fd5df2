#!/usr/bin/env bash
# A check by hand, not part of scripts/test.sh: docs/citus.sql on a real Citus cluster.
# Needs Citus built and installed into the local PostgreSQL 15 (it is not packaged for
# Debian here; docs/scale-out.md says how it was built) and pgprompt installed there.
#
# Starts a coordinator and two workers (ports 9700-9702, data in $CITUS_DATA), runs
# docs/citus.sql, loads demo/example.sql and tests/citus/*.sql through the coordinator and
# into a single-node database of the test cluster, compiles every reply turn on both (a
# bare SELECT, so Citus sends the call to the worker) and fails unless every body is
# byte-identical. Then checks that a sealed turn is refused through the coordinator and
# that SET LOCAL pgprompt.allow_history_rewrite reaches the workers.
set -euo pipefail
cd "$(dirname "$0")/.."
export PG_MAJOR=15
. scripts/pg.sh
CITUS_DATA=${CITUS_DATA:-/tmp/pgprompt-citus}
BIN=$("$PG_CONFIG" --bindir)
[ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ] || { echo "citus.so is not installed for $PG_CONFIG" >&2; exit 2; }

mkdir -p "$CITUS_DATA" && chmod 777 "$CITUS_DATA"
for port in 9700 9701 9702; do
    dir=$CITUS_DATA/$port
    if [ ! -d "$dir" ]; then
        mkdir -p "$dir" && chown postgres "$dir"
        runuser -u postgres -- "$BIN/initdb" -D "$dir" -A trust >/dev/null
        printf "shared_preload_libraries = 'citus'\nport = %s\nunix_socket_directories = '/tmp'\n" "$port" >>"$dir/postgresql.conf"
    fi
    runuser -u postgres -- "$BIN/pg_ctl" -D "$dir" -l "$CITUS_DATA/$port.log" -w status >/dev/null 2>&1 ||
        runuser -u postgres -- "$BIN/pg_ctl" -D "$dir" -l "$CITUS_DATA/$port.log" -w start >/dev/null
done
on_node() { psql -h /tmp -U postgres -X -q -v ON_ERROR_STOP=1 -p "$@"; }
for port in 9700 9701 9702; do
    on_node "$port" -d postgres -c "DROP DATABASE IF EXISTS app WITH (FORCE)" -c "CREATE DATABASE app"
    on_node "$port" -d app -c "CREATE EXTENSION citus"
done
on_node 9700 -d app -c "SELECT citus_set_coordinator_host('localhost', 9700)" \
    -c "SELECT citus_add_node('localhost', 9701)" -c "SELECT citus_add_node('localhost', 9702)" >/dev/null
on_node 9700 -d app -c "CREATE EXTENSION pgprompt"
on_node 9700 -d app -f docs/citus.sql >/dev/null

scripts/cluster.sh start >/dev/null
eval "$(scripts/cluster.sh env)"
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS citus_single" -c "CREATE DATABASE citus_single"
psql -X -q -v ON_ERROR_STOP=1 -d citus_single -c "CREATE EXTENSION pgprompt"

single() { psql -X -q -v ON_ERROR_STOP=1 -d citus_single "$@"; }
citus() { on_node 9700 -d app "$@"; }
bodies() { # every reply turn's compile_turn, in one order, as "turn md5"
    local db=$1 t
    for t in $($db -At -c "SELECT conversation_id || ':' || id FROM prompt.turns WHERE kind = 'reply' ORDER BY conversation_id, seq"); do
        echo "${t##*:} $($db -At -c "SELECT prompt.compile_turn('${t%%:*}', '${t##*:}')" | md5sum | cut -c1-32)"
    done
}
same() {
    bodies single >"$CITUS_DATA/single.txt"
    bodies citus >"$CITUS_DATA/citus.txt"
    diff "$CITUS_DATA/single.txt" "$CITUS_DATA/citus.txt"
    echo "$1: $(wc -l <"$CITUS_DATA/single.txt") compile_turn bodies, byte-identical on Citus and a single node"
}
for f in demo/example.sql tests/citus/workload.sql; do single -f "$f" >/dev/null; citus -f "$f" >/dev/null; done
same "sealed"
single -f tests/citus/rounds_and_side.sql; citus -f tests/citus/rounds_and_side.sql
same "rounds and a Side"

refused=$(citus -c "UPDATE prompt.turns SET prompt = 'edited' WHERE id = md5('r12')::uuid" 2>&1 || true)
grep -q "sealed_turn_immutable" <<<"$refused" || { echo "a sealed turn was not refused: $refused" >&2; exit 1; }
citus -c "BEGIN" -c "SET LOCAL pgprompt.allow_history_rewrite = on" \
    -c "DELETE FROM prompt.turns WHERE conversation_id = md5('conv2')::uuid AND id = md5('m12')::uuid" -c "ROLLBACK"
echo "sealed turns refused through the coordinator; allow_history_rewrite reaches the workers"
