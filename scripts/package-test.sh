#!/usr/bin/env bash
# Test tier 4: the package installs and works without the build tree. Builds the
# artifact for PostgreSQL $PG_MAJOR (scripts/package.sh), removes what a build
# installed, installs the artifact (15: dpkg -i the .deb; 18: the tarball's install.sh),
# starts a clean cluster, and runs the psql golden files (pg_regress) against it. On 18,
# the CloudNativePG image is built from the tarball and tested the same way from an image
# volume (scripts/cnpg-image.py, scripts/cnpg-image-test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
. scripts/pg.sh
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo

OUT=$(scripts/package.sh | tail -1)
LIBDIR=$("$PG_CONFIG" --pkglibdir)
SHAREDIR=$("$PG_CONFIG" --sharedir)
# Only the package may provide the extension.
$SUDO rm -f "$LIBDIR/pgprompt.so" "$SHAREDIR"/extension/pgprompt*
if [ "$PG_MAJOR" = 15 ]; then
  $SUDO dpkg -i "$OUT" >/dev/null
  trap '$SUDO dpkg -r postgresql-15-pgprompt >/dev/null' EXIT
  dpkg -L postgresql-15-pgprompt | grep -q "$LIBDIR/pgprompt.so"
else
  tmp=$(mktemp -d)
  tar -xzf "$OUT" -C "$tmp"
  $SUDO env PG_CONFIG="$PG_CONFIG" "$tmp"/pgprompt-*/install.sh >/dev/null
  rm -rf "$tmp"
fi
echo "== installed from $(basename "$OUT")" >&2

PG_REGRESS=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress
scripts/cluster.sh start
trap_cmd=$(trap -p EXIT | sed "s/^trap -- '\(.*\)' EXIT$/\1/")
trap "scripts/cluster.sh stop; $trap_cmd" EXIT
eval "$(scripts/cluster.sh env)"
mkdir -p target/regress-package
if ! "$PG_REGRESS" --bindir="$PGBIN" --host="$PGHOST" --port="$PGPORT" --user=postgres \
    --inputdir=tests/regress --outputdir=target/regress-package --dbname=pgprompt_package \
    --schedule=tests/regress/schedule; then
  cat target/regress-package/regression.diffs >&2 || true
  exit 1
fi
echo "== the package passes the psql golden files (PostgreSQL $PG_MAJOR)"
if [ "$PG_MAJOR" = 18 ]; then
  # The CloudNativePG image-volume image, from the same tarball, mounted as CloudNativePG
  # mounts it on a PostgreSQL 18 with no pgprompt file of its own.
  IMAGE=$(python3 scripts/cnpg-image.py "$OUT" target/dist)
  scripts/cnpg-image-test.sh "$IMAGE"
fi
