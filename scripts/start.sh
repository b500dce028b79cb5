#!/usr/bin/env bash
# The README's first command: installs what lmlab needs, builds it (release), and starts
# the workbench on its bundled default experiment (Tiny Shakespeare, char-level
# Dispatcher). Every stage says what it does (the first run installs packages and
# compiles: a minute or two). Extra arguments go to lmlab (e.g. --plain).
#   scripts/start.sh --install [PREFIX]   build, then `meson install` lmlab into PREFIX
#                                         (default ~/.local: ~/.local/bin/lmlab) and exit
set -euo pipefail
called_from=$PWD
cd "$(dirname "$0")/.."
say() { printf 'lmlab: %s\n' "$*" >&2; }
# check_prefix PREFIX: PREFIX made absolute (relative to where the script was called from)
# on stdout, or a message saying what is wrong with it and status 1. Checked before
# anything is built: every existing part of it must be a directory, and the deepest one
# writable.
check_prefix() {
    local p=$1 up
    [ -n "$p" ] || { say "--install: the prefix is empty: give a folder, e.g. ~/.local"; return 1; }
    case $p in /*) ;; *) p="$called_from/$p" ;; esac
    up=$p
    while [ ! -e "$up" ]; do up=$(dirname "$up"); done
    if [ ! -d "$up" ]; then
        say "--install $1: $up is a file, not a folder: choose another prefix (e.g. ~/.local)"
        return 1
    fi
    if [ ! -w "$up" ] || ! ( : >"$up/.lmlab-install-probe.$$" ) 2>/dev/null; then
        say "--install $1: $up cannot be written (read-only, or not yours): choose a prefix you can write (e.g. ~/.local), or run it with sudo"
        return 1
    fi
    rm -f "$up/.lmlab-install-probe.$$"
    printf '%s\n' "$p"
}
install_to=""
if [ "${1:-}" = "--install" ]; then
    install_to=$(check_prefix "${2-$HOME/.local}") || exit 2
    shift $(( $# >= 2 ? 2 : 1 ))
fi
say "checking the Debian packages it needs (scripts/deps.sh)"
scripts/deps.sh --if-missing
if [ ! -f build/build.ninja ]; then
    say "configuring a release build in build/ (meson setup)"
    meson setup build --buildtype=release --prefix="${install_to:-$HOME/.local}" |
        grep -E "^(Project name|Build type|Found ninja)|ERROR" >&2 || true
fi
say "compiling (ninja -C build; progress below)"
if [ -t 2 ]; then
    ninja -C build >&2           # on a terminal ninja shows one progress line [n/total]
else
    ninja -C build | awk '/^\[/ { if (++k % 20 == 0) print } !/^\[/' >&2
fi
bin="$PWD/build/app/lmlab"
if [ -n "$install_to" ]; then
    if ! meson configure build --prefix="$install_to" >/dev/null ||
       ! ninja -C build >/dev/null ||   # regenerates for the new prefix
       ! meson install -C build --no-rebuild >/dev/null; then
        say "installing into $install_to failed (meson's message above)"
        exit 1
    fi
    say "installed $install_to/bin/lmlab (it reads this checkout's data/ and experiments/)"
    case ":$PATH:" in
        *":$install_to/bin:"*) say "$install_to/bin is on your PATH: type lmlab" ;;
        *) say "add it to your PATH to type lmlab anywhere:  export PATH=$(printf %q "$install_to/bin"):\$PATH" ;;
    esac
    exit 0
fi
if ! command -v lmlab >/dev/null 2>&1; then
    say "the binary is $bin; to type \`lmlab\` as the README does:"
    say "  scripts/start.sh --install        (meson install into ~/.local/bin)"
    say "  or: export PATH=\"$PWD/build/app:\$PATH\""
fi
exec "$bin" "$@"
