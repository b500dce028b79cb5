#!/usr/bin/env bash
# The README's first command: installs what lmlab needs, builds it (release), and starts
# the workbench on its bundled default experiment (Tiny Shakespeare, char-level
# Dispatcher). Extra arguments go to lmlab (e.g. --plain).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --if-missing
[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
ninja -C build >/dev/null
exec build/app/lmlab "$@"
