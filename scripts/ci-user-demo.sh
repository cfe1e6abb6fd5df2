#!/usr/bin/env bash
# The README's first command as a new user would run it: an ordinary account with sudo,
# its own copy of this checkout, its own cargo home, the machine's Rust toolchain. Run by
# .ci/run (as root: it makes the account); prints how long the demo took.
#   scripts/ci-user-demo.sh [user]     # default: pgprompt-ci
set -euo pipefail
cd "$(dirname "$0")/.."
USER_NAME=${1:-pgprompt-ci}
[ "$(id -u)" -eq 0 ] || { echo "run as root: it makes the account" >&2; exit 2; }
RUSTUP=${RUSTUP_HOME:-$HOME/.rustup}
CARGO_BIN=${CARGO_HOME:-$HOME/.cargo}/bin

if ! id "$USER_NAME" >/dev/null 2>&1; then
  useradd -m -s /bin/bash "$USER_NAME"
fi
echo "$USER_NAME ALL=(ALL) NOPASSWD:ALL" > "/etc/sudoers.d/$USER_NAME"
chmod 440 "/etc/sudoers.d/$USER_NAME"
HOME_DIR=$(getent passwd "$USER_NAME" | cut -d: -f6)
# The machine's toolchain, readable by the account (a user would have installed rustup; this
# machine reaches no toolchain server); cargo-pgrx as root built it, on PATH.
chmod o+x "$(dirname "$RUSTUP")" "$(dirname "$CARGO_BIN")"
chmod -R o+rX "$RUSTUP" "$CARGO_BIN"
rm -rf "$HOME_DIR/pgprompt"
git ls-files -z | tar --null -T - -cf - | (mkdir -p "$HOME_DIR/pgprompt" && tar -xf - -C "$HOME_DIR/pgprompt")
chown -R "$USER_NAME:" "$HOME_DIR/pgprompt"
start=$(date +%s)
# The account's own shell: HOME, its own cargo home and pgrx config; the toolchain and
# cargo-pgrx from the machine's.
runuser -l "$USER_NAME" -c "export RUSTUP_HOME=$RUSTUP CARGO_HOME=\$HOME/.cargo PATH=\$HOME/.cargo/bin:$CARGO_BIN:\$PATH; \
  cd pgprompt && scripts/demo.sh && scripts/cluster.sh stop"
echo "== the demo as $USER_NAME (sudo, not root): passed in $(( $(date +%s) - start )) s"
