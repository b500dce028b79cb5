#!/usr/bin/env bash
# Installs the Debian packages lmlab needs to build, run and test (as root, or via sudo).
# `scripts/deps.sh --list` prints the package names only (for .ci/run).
set -euo pipefail
PACKAGES="build-essential pkg-config meson ninja-build
    libopenblas-dev libncurses-dev libsqlite3-dev libjansson-dev libzip-dev
    tmux sqlite3 ncurses-term locales clang libclang-rt-14-dev"
if [ "${1:-}" = "--list" ]; then
    echo $PACKAGES
    exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null
