#!/usr/bin/env bash
# The scale-out benchmark, one command, as root (not part of the test command): Citus's
# coordinator and two workers from the blocks of docs/scale-out.md and a single node beside
# them (scripts/citus-nodes.sh, as scripts/citus-check.sh sets them up: a release install,
# free ports, a fresh directory, every server stopped on exit), the bench's rows loaded
# into both, then bench/scale_out.py measures and writes the "Scale-out" section of
# bench/RESULTS.md. Needs Citus built and installed as the docs' "Building Citus" says.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/citus-nodes.sh
# pg_stat_statements preloaded on the workers and the single node: the measurement lists
# what each plans at every call (bench/scale_out.py, `planned`).
for port in "$W1" "$W2"; do
    node "$port" -d app -c "ALTER SYSTEM SET shared_preload_libraries = citus, pgprompt, pg_stat_statements"
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/nodes/$port" -l "$WORK/nodes/$port.log" -w restart >/dev/null
done
single -c "ALTER SYSTEM SET shared_preload_libraries = pg_stat_statements"
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/single" -l "$WORK/single.log" -w restart >/dev/null
echo "loading the bench's rows (ports $SINGLE and $COORDINATOR)"
for port in "$SINGLE" "$COORDINATOR"; do python3 bench/scale_out.py load "$port"; done
echo "measuring"
python3 bench/scale_out.py measure "$SINGLE" "$COORDINATOR"
