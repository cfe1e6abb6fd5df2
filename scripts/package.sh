#!/usr/bin/env bash
# Builds installable artifacts for PostgreSQL $PG_MAJOR (scripts/pg.sh) into target/dist/:
#   15, 17: postgresql-MAJOR-pgprompt_VERSION_amd64.deb (cargo pgrx package, then dpkg-deb;
#           15 for Debian 12, 17 for Debian 13)
#   18: pgprompt-VERSION-pg18-linux-x86_64.tar.gz (lib/ and share/extension/, with install.sh)
# The .deb installs into Debian's PostgreSQL paths; the tarball into any PostgreSQL 18 whose
# pg_config is on PATH (or named by PG_CONFIG). Each carries LICENSE and
# THIRD-PARTY-NOTICES.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
. scripts/pg.sh
scripts/setup.sh demo >/dev/null

VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
STAGE=target/package-pg$PG_MAJOR
DIST=target/dist
rm -rf "$STAGE"
mkdir -p "$DIST"
echo "== cargo pgrx package (release, PostgreSQL $PG_MAJOR)" >&2
cargo pgrx package --pg-config "$PG_CONFIG" --out-dir "$STAGE" >/dev/null
LIBDIR=$("$PG_CONFIG" --pkglibdir)
SHAREDIR=$("$PG_CONFIG" --sharedir)

if [ "$PG_MAJOR" != 18 ]; then
  ROOT=target/deb-root
  rm -rf "$ROOT"
  mkdir -p "$ROOT/DEBIAN" "$ROOT/usr/share/doc/postgresql-$PG_MAJOR-pgprompt"
  cp -a "$STAGE"/. "$ROOT"/
  cp LICENSE "$ROOT/usr/share/doc/postgresql-$PG_MAJOR-pgprompt/copyright"
  cp THIRD-PARTY-NOTICES.md "$ROOT/usr/share/doc/postgresql-$PG_MAJOR-pgprompt/"
  cat > "$ROOT/DEBIAN/control" <<CONTROL
Package: postgresql-$PG_MAJOR-pgprompt
Version: $VERSION
Architecture: amd64
Maintainer: pgprompt authors
Depends: postgresql-$PG_MAJOR, libc6
Section: database
Priority: optional
Description: prompt compiler for PostgreSQL $PG_MAJOR
 pgprompt compiles the exact request a language model gets for a conversation
 turn, inside PostgreSQL, from the rows it reads: CREATE EXTENSION pgprompt.
CONTROL
  OUT="$DIST/postgresql-$PG_MAJOR-pgprompt_${VERSION}_amd64.deb"
  dpkg-deb --build --root-owner-group "$ROOT" "$OUT" >/dev/null
else
  NAME="pgprompt-$VERSION-pg$PG_MAJOR-linux-x86_64"
  TREE="target/$NAME"
  rm -rf "$TREE"
  mkdir -p "$TREE/lib" "$TREE/share/extension"
  cp "$STAGE$LIBDIR"/pgprompt.so "$TREE/lib/"
  cp "$STAGE$SHAREDIR"/extension/pgprompt* "$TREE/share/extension/"
  cp LICENSE THIRD-PARTY-NOTICES.md "$TREE/"
  cat > "$TREE/install.sh" <<'INSTALL'
#!/bin/sh
# Installs pgprompt into the PostgreSQL whose pg_config is $PG_CONFIG (default: on PATH).
set -eu
PG_CONFIG=${PG_CONFIG:-pg_config}
here=$(dirname "$0")
cp "$here"/lib/pgprompt.so "$("$PG_CONFIG" --pkglibdir)/"
cp "$here"/share/extension/* "$("$PG_CONFIG" --sharedir)/extension/"
echo "pgprompt installed into $("$PG_CONFIG" --version); then: CREATE EXTENSION pgprompt;"
INSTALL
  chmod +x "$TREE/install.sh"
  OUT="$DIST/$NAME.tar.gz"
  tar -C target -czf "$OUT" "$NAME"
fi
echo "$OUT"
