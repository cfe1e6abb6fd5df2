#!/usr/bin/env bash
# PostgreSQL 17 as Debian 13 (trixie) ships it, from a machine that is not Debian 13: a
# Debian 13 root made with debootstrap, this checkout and the Rust toolchain bind-mounted
# into it at the same paths, and a command run there as root.
#
#   scripts/debian13.sh                   # PG_MAJOR=17 scripts/test.sh, in Debian 13
#   scripts/debian13.sh scripts/demo.sh   # any command (PG_MAJOR=17 is set)
#
# On a Debian 13 machine none of this is needed: PG_MAJOR=17 scripts/demo.sh (or test.sh)
# installs Debian 13's postgresql-17 and postgresql-server-dev-17 like 15 on Debian 12.
#
# The root is $TRIXIE_ROOT (default /var/tmp/pgprompt-trixie), made once from
# $DEBIAN_MIRROR (default http://deb.debian.org/debian) and kept: a second run only
# mounts. The build inside writes its own target directory (target/trixie) and Python
# environment (target/trixie/venv): Debian 13's libc and Python are not this machine's, so
# what is made there must not be run here, and the checkout's .venv is not touched there.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROOTFS=${TRIXIE_ROOT:-/var/tmp/pgprompt-trixie}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
[ $# -gt 0 ] || set -- scripts/test.sh

log() { printf '== debian13: %s\n' "$*" >&2; }

if [ ! -x "$ROOTFS/usr/bin/apt-get" ]; then
  if ! command -v debootstrap >/dev/null; then
    log "installing debootstrap"
    $SUDO apt-get install -y -qq debootstrap >/dev/null
  fi
  log "making a Debian 13 root in $ROOTFS (debootstrap trixie, once)"
  $SUDO debootstrap --variant=minbase trixie "$ROOTFS" "$MIRROR" >/dev/null
  echo "deb $MIRROR trixie main" | $SUDO tee "$ROOTFS/etc/apt/sources.list" >/dev/null
fi
$SUDO cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
# This machine's trust: the certificate authorities it adds to Debian's (a proxy's, say),
# so the package registries answer inside as they do here.
if [ ! -x "$ROOTFS/usr/sbin/update-ca-certificates" ]; then
  $SUDO chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    /bin/sh -c 'apt-get update -qq && apt-get install -y -qq ca-certificates >/dev/null'
fi
if compgen -G "/usr/local/share/ca-certificates/*" >/dev/null; then
  $SUDO mkdir -p "$ROOTFS/usr/local/share/ca-certificates"
  $SUDO cp /usr/local/share/ca-certificates/* "$ROOTFS/usr/local/share/ca-certificates/"
  $SUDO chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin update-ca-certificates >/dev/null
fi

# What the command sees: the kernel's file systems, this checkout, the toolchain (the
# same paths as here, so CARGO_HOME and RUSTUP_HOME mean the same).
mounted=()
bind() {
  $SUDO mkdir -p "$ROOTFS$2"
  if ! mountpoint -q "$ROOTFS$2"; then
    $SUDO mount "${@:3}" --bind "$1" "$ROOTFS$2"
    mounted=("$ROOTFS$2" "${mounted[@]}")
  fi
}
unmount() {
  for m in "${mounted[@]}"; do $SUDO umount -l "$m" || true; done
}
trap unmount EXIT
bind /proc /proc
bind /sys /sys
bind /dev /dev
bind /dev/pts /dev/pts
bind /dev/shm /dev/shm
bind "$REPO" "$REPO"
bind "$CARGO_HOME" "$CARGO_HOME"
bind "$RUSTUP_HOME" "$RUSTUP_HOME"

# The network settings of this machine's environment (proxies, certificate bundles, pip's
# and npm's), passed in as they are.
passed=()
while IFS='=' read -r name _; do
  case "$name" in
    *_proxy|*_PROXY|PIP_*|NPM_CONFIG_*|*_CA_BUNDLE|*_CA_CERTS|SSL_CERT_*|*_CA_CERTS_FILE) passed+=("$name=${!name}") ;;
  esac
done < <(env)

log "PG_MAJOR=17 $* (in Debian 13)"
$SUDO chroot "$ROOTFS" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 "${passed[@]}" \
  CARGO_HOME="$CARGO_HOME" RUSTUP_HOME="$RUSTUP_HOME" CARGO_TARGET_DIR="$REPO/target/trixie" \
  PGPROMPT_VENV="$REPO/target/trixie/venv" \
  PATH="$CARGO_HOME/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  PG_MAJOR=17 /bin/bash -c 'cd "$1" && shift && exec "$@"' - "$REPO" "$@"
