#!/usr/bin/env bash
# e2e_readme_tour.sh — the README's tour, run as written (issue 27, "done when"): every
# `lmlab ...` line of "## A tour" (and the mpirun line when MPI is here), then the line-mode
# session below it, each in a temporary folder and store; only the training length is cut
# (steps=20 appended to a train line, steps=1 to bench) so the test stays short. The
# dashboard and the prompt run in a real terminal (tmux) and are left with `quit`. Every
# command must exit 0. Usage: e2e_readme_tour.sh LMLAB_BINARY README.md
set -u
bin=$(readlink -f "$1")
readme=$(readlink -f "$2")
dir=$(mktemp -d)
sock="lmlab-tour-$$"   # one tmux server per terminal line: "$sock-N" for tour line N
n=0
trap 'for i in $(seq 1 "$n"); do tmux -L "$sock-$i" kill-server 2>/dev/null; done; rm -rf "$dir"' EXIT
cd "$dir"
export LMLAB_DB="$dir/tour.db" TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p bin
ln -s "$bin" bin/lmlab                 # `lmlab` as the README types it
export PATH="$dir/bin:$PATH"

# the tour's lines: from "## A tour" to the line-mode session, comments cut
sed -n '/^## A tour/,/^A session in line mode/p' "$readme" |
    grep -E '^    (lmlab|mpirun)( |$)' | sed -e 's/^    //' -e 's/ \{2,\}# .*$//' >tour.txt
[ "$(wc -l <tour.txt)" -ge 8 ] || fail "found only $(wc -l <tour.txt) tour lines in $readme"
printf 'runs\nshow model\n' >script.lmlab   # the tour's script.lmlab

# in a terminal: start, wait for the prompt, quit; the exit status is the command's.
# Each line gets a tmux server of its own ("$sock-$n"): the previous line's server exits
# when its session ends, and a new session started on that socket while it was still
# exiting died with "server exited unexpectedly" (a stress round, at load 11).
in_terminal() { # in_terminal CMDLINE
    rm -f rc.txt
    local ts="$sock-$n"
    tmux -L "$ts" new-session -d -s t -x 120 -y 40 "$1; echo \$? >$dir/rc.txt" ||
        fail "'$1': tmux could not start a session"
    local ok=""
    for _ in $(seq 1 600); do
        tmux -L "$ts" capture-pane -p -t t 2>/dev/null | grep -q "lmlab>" && { ok=1; break; }
        sleep 0.1
    done
    [ -n "$ok" ] || { tmux -L "$ts" capture-pane -p -t t; fail "'$1': no prompt"; }
    tmux -L "$ts" send-keys -t t -l "quit"
    tmux -L "$ts" send-keys -t t Enter
    for _ in $(seq 1 600); do [ -f rc.txt ] && break; sleep 0.1; done
    [ -f rc.txt ] || fail "'$1' did not quit"
    cat rc.txt
}

while IFS= read -r line; do   # bounded: reads a file to its end
    n=$((n + 1))
    run="$line"
    case "$line" in
        *" train "*) run="$line steps=20" ;;
        "lmlab bench"*) run="$line steps=1" ;;
    esac
    case "$line" in
        "lmlab" | "lmlab --plain" | *"--dashboard"*)
            case "$line" in mpirun*) command -v mpirun >/dev/null || { echo "skipped (no MPI): $line"; continue; } ;; esac
            rc=$(in_terminal "$run") ;;
        *)
            bash -c "$run" >out.txt 2>&1 </dev/null; rc=$? ;;
    esac
    [ "$rc" = 0 ] || { cat out.txt 2>/dev/null | tail -20; fail "tour line '$line' (run as '$run') exited $rc"; }
    echo "ok: $line"
done <tour.txt

# the line-mode session, as a script of the prompt's lines (training cut to 30 steps)
sed -n '/^A session in line mode/,/^### /p' "$readme" | grep -E '^    lmlab> ' |
    sed -e 's/^    lmlab> //' -e 's/ \{2,\}# .*$//' -e 's/^train steps=[0-9]*/train steps=30/' >session.lmlab
[ "$(wc -l <session.lmlab)" -ge 6 ] || fail "found no line-mode session"
lmlab session.lmlab >out.txt 2>&1 || { cat out.txt; fail "the line-mode session failed"; }
grep -q "run #[0-9]* started" out.txt || fail "the session trained nothing: $(cat out.txt)"
echo "e2e_readme_tour: $n tour lines and the line-mode session ran"
