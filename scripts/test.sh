#!/usr/bin/env bash
# The README's test command: configures (if needed), builds and runs the whole test suite
# (unit tests, PyTorch parity, commands, dashboard end to end), then prints one line
# "N passed, N failed". On a fresh Debian machine it first installs the packages it needs
# (scripts/deps.sh, only when one is missing, so later runs start at once). BUILD_DIR and
# MESON_ARGS let CI reuse it for sanitizer builds.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --if-missing || { echo "lmlab: could not install the packages the tests need" >&2; exit 1; }
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    meson setup "$BUILD_DIR" ${MESON_ARGS:-} >/dev/null || exit 1
fi
ninja -C "$BUILD_DIR" >/dev/null || { ninja -C "$BUILD_DIR"; exit 1; }
meson test -C "$BUILD_DIR" --print-errorlogs ${TEST_ARGS:-}
rc=$?
log="$BUILD_DIR/meson-logs/testlog.json"
if [ -f "$log" ]; then
    passed=$(grep -c '"result": "OK"' "$log" || true)
    skipped=$(grep -c '"result": "SKIP"' "$log" || true)
    failed=$(grep -cE '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
    echo "tests: $passed passed, $failed failed, $skipped skipped"
fi
exit $rc
