# Sourced by scripts/citus-check.sh and bench/scale-out.sh (as root, from the checkout):
# the steps of docs/scale-out.md, extracted from that file and run as written, on free ports
# in a fresh mktemp directory, and a single node of its own beside them, with the demo
# loaded into both and its turn compiled. Leaves: WORK, the ports COORDINATOR, W1, W2, W3
# and SINGLE, the functions blocks, as_postgres, node, single and citus, and an EXIT trap
# that stops every server started here (and removes WORK when the script succeeded).
[ "$(id -u)" = 0 ] || { echo "$0 runs as root (the servers run as postgres)" >&2; exit 2; }
export PG_MAJOR=15
. scripts/pg.sh
[ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ] ||
    { echo "citus.so is not installed for $PG_CONFIG: build it as docs/scale-out.md says ('Building Citus')" >&2; exit 2; }

blocks() { # the docs' code blocks tagged `sh $1`, in order
    awk -v tag="$1" '$0 == "```sh " tag { on = 1; next } on && /^```$/ { on = 0; print ""; next } on' docs/scale-out.md
}
for tag in citus-install citus-env citus-setup citus-grow; do
    [ -n "$(blocks $tag)" ] || { echo "docs/scale-out.md has no 'sh $tag' block" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/pgprompt-citus.XXXXXX)
chmod 755 "$WORK" && chown postgres "$WORK"
read -r COORDINATOR W1 W2 W3 SINGLE < <(python3 -c '
import socket
s = [socket.socket() for _ in range(5)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
stop_all() {
    local pid
    for pid in "$WORK"/nodes/*/postmaster.pid "$WORK"/single/postmaster.pid; do
        [ -f "$pid" ] && runuser -u postgres -- "$PGBIN/pg_ctl" -D "$(dirname "$pid")" -m fast -w stop >/dev/null 2>&1
    done
    return 0
}
finish() {
    local rc=$?
    stop_all
    if [ "$rc" = 0 ]; then rm -rf "$WORK"; else echo "$(basename "$0") failed; logs and data in $WORK" >&2; fi
}
trap finish EXIT

as_postgres() { # a script of the docs' blocks, as postgres, from the checkout, on this run's ports
    runuser -u postgres -- env PATH="$PGBIN:$PATH" PGBIN="$PGBIN" CITUS_DIR="$WORK/nodes" \
        COORDINATOR_PORT="$COORDINATOR" WORKER_PORTS="$W1 $W2" NEW_PORT="$W3" \
        bash -euo pipefail -c "$1" >"$WORK/$2.out" 2>&1 || { cat "$WORK/$2.out" >&2; exit 1; }
}
export PATH="$HOME/.cargo/bin:$PATH"
echo "step 1 (install, as root)"
bash -euo pipefail -c "$(blocks citus-install)" >"$WORK/install.out" 2>&1 || { cat "$WORK/install.out" >&2; exit 1; }
echo "steps 2-7 (ports $COORDINATOR, $W1, $W2; $WORK/nodes)"
as_postgres "$(blocks citus-env)"$'\n'"$(blocks citus-setup)" setup
grep -q '"messages"' "$WORK/setup.out" || { echo "step 7 printed no body" >&2; exit 1; }

mkdir "$WORK/single" && chown postgres "$WORK/single"
runuser -u postgres -- "$PGBIN/initdb" -D "$WORK/single" -A trust -U postgres >/dev/null
printf "port = %s\nunix_socket_directories = '%s'\n" "$SINGLE" "$WORK/single" >>"$WORK/single/postgresql.conf"
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/single" -l "$WORK/single.log" -w start >/dev/null
node() { psql -X -q -h localhost -U postgres -v ON_ERROR_STOP=1 -p "$@"; }
single() { node "$SINGLE" -d app "$@"; }
citus() { node "$COORDINATOR" -d app "$@"; }
node "$SINGLE" -d postgres -c "CREATE DATABASE app"
single -c "CREATE EXTENSION pgprompt"
single -f demo/example.sql >/dev/null
single -c "SELECT prompt.compile_turn('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0002')" >/dev/null

