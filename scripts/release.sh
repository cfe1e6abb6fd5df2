#!/usr/bin/env bash
# Makes a release (README, "Development"): one command, every artifact tested.
#   scripts/release.sh VERSION
#
# 1. Every file that names the version says VERSION (Cargo.toml, core/Cargo.toml,
#    META.json, the README's install section, docs/cloudnativepg.md);
#    the update script from the previous release (sql/pgprompt--OLD--VERSION.sql) must
#    already be written: it is the one step no script can do.
# 2. The install script cargo pgrx generates is frozen as sql/releases/pgprompt--VERSION.sql,
#    and the shipped catalog is checked against the newest SDKs (scripts/catalog.py).
# 3. The artifacts, into target/dist/: the .deb for PostgreSQL 15, the tarball for 18, and
#    the CloudNativePG image built from the tarball.
# 4. Their tests: each package installed on a clean cluster runs the psql golden files, and
#    the image runs them from an image volume (scripts/package-test.sh).
# 5. scripts/version-check.py agrees.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
NEW=${1:?usage: scripts/release.sh VERSION}
[[ "$NEW" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "VERSION is MAJOR.MINOR.PATCH, not $NEW" >&2; exit 2; }
OLD=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)

log() { printf '== release %s: %s\n' "$NEW" "$*" >&2; }

# 1. The version, everywhere.
if [ "$OLD" != "$NEW" ]; then
  log "bumping $OLD -> $NEW"
  sed -i "0,/^version = \"$OLD\"/s//version = \"$NEW\"/" Cargo.toml core/Cargo.toml lints/Cargo.toml
  sed -i "s/\"version\": \"$OLD\"/\"version\": \"$NEW\"/g; s#pgprompt--$OLD.sql#pgprompt--$NEW.sql#" META.json
  for f in README.md docs/cloudnativepg.md; do
    sed -i "s/pgprompt_$OLD/pgprompt_$NEW/g; s/pgprompt-$OLD/pgprompt-$NEW/g; s/pgprompt:$OLD/pgprompt:$NEW/g; \
            s/pgprompt-extension:$OLD/pgprompt-extension:$NEW/g; s/pgprompt--$OLD.sql/pgprompt--$NEW.sql/g" "$f"
  done
  cargo update -p pgprompt -p pgprompt-core -p pgprompt-lints --offline >/dev/null 2>&1 || true
fi
update=$(ls sql/pgprompt--*--"$NEW".sql 2>/dev/null | head -1 || true)
[ -n "$update" ] || { echo "write sql/pgprompt--$OLD--$NEW.sql first: the update from the previous release" >&2; exit 1; }

# 2. The install script, frozen.
log "freezing the install script"
PG_MAJOR=15 scripts/setup.sh demo >/dev/null
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
cargo pgrx install --release --pg-config /usr/lib/postgresql/15/bin/pg_config ${SUDO:+--sudo} >/dev/null
cp "/usr/share/postgresql/15/extension/pgprompt--$NEW.sql" "sql/releases/pgprompt--$NEW.sql"

# 2b. The catalog against the newest SDKs the registry serves (README, "Model profiles"):
# scripts/catalog.py prints every id they list that the shipped catalog resolves wrongly
# or not at all; a release waits until it prints nothing.
log "the catalog against the newest anthropic, openai and google-genai"
rm -rf target/catalog-venv
python3 -m venv target/catalog-venv
target/catalog-venv/bin/pip install -q --upgrade anthropic openai google-genai 'psycopg[binary]'
target/catalog-venv/bin/pip list 2>/dev/null | grep -E '^(anthropic|openai|google-genai) ' >&2
scripts/cluster.sh start >/dev/null
eval "$(scripts/cluster.sh env)"
rc=0; behind=$(target/catalog-venv/bin/python scripts/catalog.py) || rc=$?
scripts/cluster.sh stop >/dev/null
if [ "$rc" -ne 0 ] && [ -z "$behind" ]; then
  echo "scripts/catalog.py failed (exit $rc) before it could check the catalog" >&2
  exit 1
fi
if [ -n "$behind" ]; then
  printf '%s\n' "$behind" >&2
  echo "the catalog is behind the newest SDKs: give each id above its profile (sql/profiles.sql)" >&2
  exit 1
fi

# 3 and 4. The artifacts and their tests (package-test.sh builds each with package.sh;
# on 18 it builds and tests the CloudNativePG image too).
for major in 15 18; do
  log "the PostgreSQL $major artifacts and their tests"
  PG_MAJOR=$major scripts/setup.sh test >/dev/null
  PG_MAJOR=$major scripts/package-test.sh
done

# 5. Every file agrees.
python3 scripts/version-check.py
log "done:"
ls -1 target/dist/*"$NEW"* >&2
