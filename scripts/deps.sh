#!/usr/bin/env bash
# Installs the Debian packages lmlab needs to build, run and test (as root, or via sudo).
#   scripts/deps.sh            install them (apt-get update first)
#   scripts/deps.sh --list     print the package names only (for .ci/run)
#   scripts/deps.sh --missing  print the ones not installed (exit 0 either way)
#   scripts/deps.sh --if-missing  install only when one is missing (a second run is instant)
set -euo pipefail
PACKAGES="build-essential pkg-config meson ninja-build git
    libopenblas-dev libncurses-dev libsqlite3-dev libjansson-dev libcairo2-dev libutf8proc-dev libzip-dev
    tmux sqlite3 procps ncurses-term locales clang libclang-rt-14-dev
    openmpi-bin libopenmpi-dev
    zlib1g-dev liblzma-dev libzstd-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
    libssl-dev
    qemu-user
    chromium bc"   # chromium, bc: e2e_track.sh opens the HTML report in headless Chromium
# zlib1g/liblzma/libzstd: compressed corpora; protobuf-c: TensorBoard event files (protoc
# decodes them in the tests); qemu-user: the unit tests on other CPUs (qemu-x86_64 -cpu)
# libssl-dev: libcrypto's HMAC-SHA256 proves an alert command was written by the user running it

missing() {
    local p
    for p in $PACKAGES; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
    done
}

case "${1:-}" in
    --list) echo $PACKAGES; exit 0 ;;
    --missing) missing; exit 0 ;;
    --if-missing)
        need=$(missing | tr '\n' ' ')
        [ -z "${need// /}" ] && exit 0
        echo "lmlab: installing the missing Debian packages: $need" >&2 ;;
    "") ;;
    *) echo "usage: scripts/deps.sh [--list|--missing|--if-missing]" >&2; exit 2 ;;
esac
command -v apt-get >/dev/null || {
    echo "lmlab needs Debian's packages ($PACKAGES); this machine has no apt-get:" \
         "install their equivalents by hand" >&2
    exit 1
}
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "run scripts/deps.sh as root (apt-get needs it)" >&2; exit 1; }
    SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
echo "lmlab: apt-get update, then installing the packages (a minute or two; progress below)" >&2
$SUDO apt-get update -qq
$SUDO apt-get install -y -q --no-install-recommends $PACKAGES |
    { grep -E "^(Unpacking|Setting up) " >&2 || true; }   # apt's failure still fails (pipefail)
