#!/usr/bin/env bash
# The benchmark, one command (not part of the test command): builds and installs the
# release extension, starts a throwaway cluster, loads realistic data, measures, restarts
# with shared_preload_libraries for the preloaded first compile, runs the prompt-cache
# simulator, and writes bench/RESULTS.md (and bench/cache.png).
#
#   bench/run.sh           # everything
#   bench/run.sh cache     # the prompt-cache simulator alone
#   bench/run.sh runs      # the prompt cache over agent runs alone (bench/cache_runs.py)
#   bench/run.sh clearing  # one long run with and without tool-result clearing
#                          # (bench/clearing_runs.py)
#   bench/run.sh statements  # statements per call alone (bench/statements.py)
#   bench/run.sh cache_report  # cache_report against the requests it reports alone
#                              # (bench/cache_report.py)
#   bench/run.sh measure   # the compile's measures and ratios alone (no cache simulators:
#                          # their sections are kept as RESULTS.md has them)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
. scripts/pg.sh
WHAT=${1:-all}

scripts/setup.sh
# The benchmark's own packages, into the project's venv (scripts/setup.sh made it).
python3 -c 'import langchain_core, matplotlib' 2>/dev/null || "$PGPROMPT_VENV/bin/python" -m pip install -q --disable-pip-version-check -r bench/requirements.txt
echo "== building and installing pgprompt (release)" >&2
cargo pgrx install --release --pg-config "$PG_CONFIG" >/dev/null

OPTS=(shared_buffers=512MB work_mem=64MB max_wal_size=4GB)
scripts/cluster.sh start "${OPTS[@]}"
trap 'scripts/cluster.sh stop' EXIT
eval "$(scripts/cluster.sh env)"

if [ "$WHAT" = all ] || [ "$WHAT" = measure ]; then
  echo "== loading data (conversations of 200 and 10,000 turns)" >&2
  python3 bench/bench.py build
  echo "== measuring" >&2
  python3 bench/bench.py measure
fi
if [ "$WHAT" = all ] || [ "$WHAT" = statements ]; then
  scripts/cluster.sh restart "${OPTS[@]}" shared_preload_libraries=pg_stat_statements
  echo "== statements per call (pg_stat_statements)" >&2
  python3 bench/statements.py >/dev/null
  [ "$WHAT" = statements ] && exit 0
fi
if [ "$WHAT" = all ] || [ "$WHAT" = cache_report ]; then
  echo "== cache_report over 40 and 400 requests" >&2
  python3 bench/cache_report.py >/dev/null
  [ "$WHAT" = cache_report ] && exit 0
fi
if [ "$WHAT" = all ] || [ "$WHAT" = clearing ]; then
  echo "== one long run with and without tool-result clearing (200 rounds)" >&2
  python3 bench/clearing_runs.py >/dev/null
  [ "$WHAT" = clearing ] && exit 0
fi
if [ "$WHAT" != runs ] && [ "$WHAT" != measure ]; then
  echo "== the prompt-cache simulator (2,000 turns, three trimmings)" >&2
  python3 bench/cache_sim.py >/dev/null
fi
if [ "$WHAT" != cache ] && [ "$WHAT" != measure ]; then
  echo "== the prompt cache over agent runs (200 turns of 20 rounds)" >&2
  python3 bench/cache_runs.py >/dev/null
fi
if [ "$WHAT" = all ] || [ "$WHAT" = measure ]; then
  scripts/cluster.sh restart "${OPTS[@]}" shared_preload_libraries=pgprompt
  echo "== measuring first compiles, preloaded" >&2
  python3 bench/bench.py preload
fi
# `runs` writes its own section of bench/RESULTS.md; the others rewrite the file.
if [ "$WHAT" != runs ]; then
  python3 bench/bench.py report
fi
