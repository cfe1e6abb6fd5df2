#!/usr/bin/env bash
# Installs what pgprompt needs on a bare Debian 12 machine. Idempotent: every step
# checks first and does nothing when its piece is already there.
set -euo pipefail

PGRX_VERSION=0.18.1
PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
export PATH="$HOME/.cargo/bin:$PATH"

log() { printf '== setup: %s\n' "$*" >&2; }

# 1. Debian packages.
need=()
for pkg in postgresql-15 postgresql-server-dev-15 libclang-dev clang sudo pkg-config make; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  log "installing Debian packages: ${need[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

# 2. clippy (scripts/lint.sh), part of rustup's default profile.
if ! cargo clippy --version >/dev/null 2>&1; then
  log "installing clippy"
  rustup component add clippy
fi

# 3. cargo-pgrx, exactly the version the crate pins.
if ! cargo pgrx --version 2>/dev/null | grep -q " $PGRX_VERSION\$"; then
  log "installing cargo-pgrx $PGRX_VERSION (several minutes, once)"
  cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
fi

# 4. pgrx's view of the local PostgreSQL 15.
if ! grep -qs "^pg15 *= *\"$PG_CONFIG\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
  log "cargo pgrx init --pg15 $PG_CONFIG"
  cargo pgrx init --pg15 "$PG_CONFIG"
fi

# 5. Python packages for the client-side tests (SDK wire validation, tiktoken fixtures).
if ! python3 -c 'import psycopg, anthropic, openai, pydantic, tiktoken, pytest' 2>/dev/null; then
  log "installing Python test packages"
  python3 -m pip install -q --disable-pip-version-check -r "$(dirname "$0")/../tests/requirements.txt"
fi
log "ready"
