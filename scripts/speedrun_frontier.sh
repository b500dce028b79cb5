#!/bin/sh
# speedrun_frontier.sh — the Tiny Shakespeare frontier of docs/speedrun.md: the validation
# loss over the WHOLE validation split after 60, 120, 180 and 300 s of training time
# (evaluations not counted), for
#   preset   experiments/speedrun_shakespeare.conf
#   default  experiments/default.conf (constant lr 1e-3), trained for 300 s instead of its
#            2000 steps (its schedule is constant, so only the length changes)
#   nanogpt  nanoGPT's CPU recipe from its README (2000 iterations; marks after it ended
#            give its final loss), when a nanoGPT folder is given; needs python3 with torch
# run one after another (preset, default, nanogpt; repeated --runs times), each with the
# machine's load before it. lmlab's runs go to a temporary store and folder.
#
# usage: scripts/speedrun_frontier.sh [--nanogpt DIR] [--runs N] [--only preset|default|nanogpt]
#        [--budget SECONDS] [--marks 60,120,180] [--set 'key=value ...'] [--keep FILE]
# --set changes the preset's settings (a recipe variant, e.g. --set 'batch=24 lr=3e-3').
# --keep FILE keeps the runs' store there (it is a temporary one otherwise).
# prints one line per run and mark: "recipe run mark val_loss train_s step eval_s load"
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
lmlab=${LMLAB:-$here/build/app/lmlab}
python=${PYTHON:-/usr/bin/python3}
nanogpt=""
runs=1
only=""
budget=300
marks=60,120,180
set_args=""
keep=""
while [ $# -gt 0 ]; do
    case "$1" in
    --nanogpt) nanogpt=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --marks) marks=$2; shift 2 ;;
    --set) set_args=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "speedrun_frontier.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$lmlab" ] || { echo "speedrun_frontier.sh: no $lmlab: build first (ninja -C build)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "speedrun_frontier.sh: needs sqlite3 (apt-get install sqlite3)" >&2; exit 1; }
if [ -n "$nanogpt" ] && [ ! -f "$nanogpt/model.py" ]; then
    echo "speedrun_frontier.sh: $nanogpt has no model.py (give nanoGPT's folder)" >&2; exit 2
fi
cd "$here"   # experiments/ by name
tmp=$(mktemp -d /tmp/lmlab_speedrun_XXXXXX)
trap 'if [ -n "$keep" ] && [ -f "$db" ]; then cp "$db" "$keep"; fi; rm -rf "$tmp"' EXIT
db=$tmp/runs.db
load() { cut -d' ' -f1 /proc/loadavg; }

# One lmlab run; prints its evaluations as "mark val_loss train_s step" rows.
lmlab_run() {   # name, then train arguments
    name=$1; shift
    l=$(load)
    "$lmlab" --db "$db" train "$@" runs_dir="$tmp/ckpt" time_budget="$budget" \
        eval_at_seconds="$marks" > "$tmp/$name.log" 2>&1 ||
        { echo "speedrun_frontier.sh: lmlab failed, see its output:" >&2; cat "$tmp/$name.log" >&2; exit 1; }
    id=$(sqlite3 "$db" "SELECT max(id) FROM runs")
    final_s=$(sed -n 's/.*final evaluation took \([0-9.]*\) s more.*/\1/p' "$tmp/$name.log" | head -1)
    for m in $(echo "$marks,$budget" | tr ',' ' '); do
        sqlite3 -separator ' ' "$db" "SELECT printf('%.4f', loss), printf('%.1f', elapsed), step
            FROM evals WHERE run_id=$id AND split='valid' AND elapsed >= $m - 1e-9
            ORDER BY elapsed LIMIT 1" |
        while read -r loss el step; do
            ev=$(grep -o "evaluation at $el s of training (step $step): the whole validation split in [0-9.]*" \
                 "$tmp/$name.log" | sed 's/.* in //' | head -1)
            [ "$m" = "$budget" ] && ev=$final_s
            echo "$name $r $m $loss $el $step ${ev:-?} $l"
        done
    done
}

nanogpt_run() {
    l=$(load)
    "$python" "$here/scripts/speedrun_nanogpt.py" "$nanogpt" "$here/data/tinyshakespeare.txt" \
        --marks "$marks,$budget" > "$tmp/nanogpt.log" 2>&1 ||
        { echo "speedrun_frontier.sh: nanoGPT failed:" >&2; cat "$tmp/nanogpt.log" >&2; exit 1; }
    # mark S iter N train_s T eval_s E val_loss L
    awk -v r="$r" -v l="$l" '$1 == "mark" { print "nanogpt", r, $2, $10, $6, $4, $8, l }' \
        "$tmp/nanogpt.log"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# lmlab $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'), budget ${budget} s, marks $marks"
echo "recipe run mark val_loss train_s step eval_s load"
r=1
while [ "$r" -le "$runs" ]; do
    # shellcheck disable=SC2086  # --set's words are separate settings
    case "$only" in ""|preset) lmlab_run preset speedrun_shakespeare $set_args ;; esac
    case "$only" in ""|default) lmlab_run default default steps=100000000 eval_every=0 \
        sample_every=0 checkpoint_every=0 ;; esac
    if [ -n "$nanogpt" ]; then case "$only" in ""|nanogpt) nanogpt_run ;; esac; fi
    r=$((r + 1))
done
