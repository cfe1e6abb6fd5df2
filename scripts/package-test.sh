#!/usr/bin/env bash
# Test tier 4: the package installs and works without the build tree. Builds the
# artifact for PostgreSQL $PG_MAJOR (scripts/package.sh), sets aside what a build
# installed, installs the artifact (15, 17: dpkg -i the .deb; 18: the tarball's
# install.sh), starts a clean cluster, and runs the psql golden files (pg_regress) against
# it. On 18, the CloudNativePG image is built from the tarball and tested the same way from
# an image volume (scripts/cnpg-image.py, scripts/cnpg-image-test.sh). When it ends, the
# package is removed and what was installed before (the demo's build) is put back: the
# machine is left as it was found.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
. scripts/pg.sh

OUT=$(scripts/package.sh | tail -1)
LIBDIR=$("$PG_CONFIG" --pkglibdir)
SHAREDIR=$("$PG_CONFIG" --sharedir)
saved=$(mktemp -d)
cp -a "$LIBDIR"/pgprompt.so "$saved"/ 2>/dev/null || true
mkdir -p "$saved/extension"
cp -a "$SHAREDIR"/extension/pgprompt* "$saved/extension/" 2>/dev/null || true
installed=""
cleanup() {
  scripts/cluster.sh stop || true
  if [ "$installed" = deb ]; then $SUDO dpkg -r "postgresql-$PG_MAJOR-pgprompt" >/dev/null || true; fi
  # What was there before, back in place (whatever the package left or removed).
  $SUDO rm -f "$LIBDIR/pgprompt.so" "$SHAREDIR"/extension/pgprompt*
  if [ -f "$saved/pgprompt.so" ]; then $SUDO cp -a "$saved/pgprompt.so" "$LIBDIR/"; fi
  if compgen -G "$saved/extension/pgprompt*" >/dev/null; then $SUDO cp -a "$saved"/extension/pgprompt* "$SHAREDIR/extension/"; fi
  rm -rf "$saved"
}
trap cleanup EXIT

# Only the package may provide the extension.
$SUDO rm -f "$LIBDIR/pgprompt.so" "$SHAREDIR"/extension/pgprompt*
if [ "$PG_MAJOR" != 18 ]; then
  $SUDO dpkg -i "$OUT" >/dev/null
  installed=deb
  dpkg -L "postgresql-$PG_MAJOR-pgprompt" | grep -q "$LIBDIR/pgprompt.so"
else
  tmp=$(mktemp -d)
  tar -xzf "$OUT" -C "$tmp"
  $SUDO env PG_CONFIG="$PG_CONFIG" "$tmp"/pgprompt-*/install.sh >/dev/null
  rm -rf "$tmp"
fi
echo "== installed from $(basename "$OUT")" >&2
# What every package, image volume and backend carries: the library as the linker collected
# it (scripts/pg.sh): 16 MB on x86_64, 10 MB of it the tokenizers' tables (issue 62's
# bound is 25 MB; 0.5.0's library was 87 MB).
LIB_BYTES=$(stat -c %s "$LIBDIR/pgprompt.so")
echo "== the library: $LIB_BYTES bytes" >&2
if [ "$(uname -m)" = x86_64 ] && [ "$LIB_BYTES" -gt 25000000 ]; then
  echo "the library is $LIB_BYTES bytes: built with --no-gc-sections? (scripts/pg.sh)" >&2
  exit 1
fi

PG_REGRESS=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress
scripts/cluster.sh start
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
