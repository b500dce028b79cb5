#!/usr/bin/env bash
# e2e_blas.sh — lmlab runs the best OpenBLAS kernels the CPU supports without the user
# setting anything (core/base/blas_select.h, app/main.c). The test hook
# LMLAB_TEST_BLAS_CORENAME=Prescott makes lmlab believe OpenBLAS chose Prescott; then the
# re-executed process must run the CPU's best core and say so in `show machine`, in
# `bench --json` and in a stored run's machine record. Also: the user's OPENBLAS_CORETYPE
# wins; an already re-executed environment never re-executes again (no loops); `bench`
# checks its arguments before running anything. Nothing here depends on speed.
# Usage: e2e_blas.sh LMLAB_BINARY.
set -eu
. "$(dirname "$0")/bounded.sh"   # bwait: every wait on a child is bounded
bin=$(readlink -f "$1")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail=0 pass=0
check() { # check NAME COND_STATUS OUTPUT
    if [ "$2" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; echo "$3"; fi
}
has() { grep -qF -- "$2" <<<"$1"; echo $?; }
# The environment as a user without any OpenBLAS setting has it.
plain() { env -u OPENBLAS_CORETYPE -u LMLAB_BLAS_OVERRODE -u LMLAB_TEST_BLAS_CORENAME "$@"; }

out=$(plain "$bin" -c 'show machine')
best=$(sed -n 's/^best *\([A-Za-z0-9_]*\).*/\1/p' <<<"$out")
echo "this machine: $(grep '^cpu' <<<"$out"); best core ${best:-?}"
check "show machine names the best core" "$([ -n "$best" ]; echo $?)" "$out"
check "show machine names the kernels" "$(has "$out" "kernels  ")" "$out"

# The hook: OpenBLAS "chose" Prescott. On a CPU whose best is stronger, lmlab re-executes.
out=$(plain LMLAB_TEST_BLAS_CORENAME=Prescott "$bin" -c 'show machine')
if [ "$best" != Prescott ] && [ -n "$best" ]; then
    check "re-exec: the best core runs" "$(has "$out" "kernels  $best kernels (chosen by lmlab: OpenBLAS chose Prescott, weaker than this CPU supports")" "$out"
    check "re-exec: the library runs it" "$(has "$out" "NO_AFFINITY $best ")" "$out"
    check "re-exec: the machine line says why" "$(has "$out" "(chosen by lmlab: OpenBLAS chose Prescott")" "$out"
    # The same process (pid) re-executed: its environment now carries the variable and the
    # mark, and it keeps its name.
    env -u OPENBLAS_CORETYPE -u LMLAB_BLAS_OVERRODE LMLAB_TEST_BLAS_CORENAME=Prescott \
        "$bin" --db "$dir/p.db" < <(sleep 3) >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 1 20); do
        tr '\0' '\n' < /proc/$pid/environ 2>/dev/null | grep -q '^LMLAB_BLAS_OVERRODE=Prescott$' && break
        sleep 0.1
    done
    envs=$(tr '\0' '\n' < /proc/$pid/environ 2>/dev/null || true)
    comm=$(cat /proc/$pid/comm 2>/dev/null || true)
    bwait $pid 30 "lmlab reading a 3 s stdin" || true
    check "re-exec: the same pid carries the mark" "$(has "$envs" "LMLAB_BLAS_OVERRODE=Prescott")" "$envs"
    check "re-exec: and OPENBLAS_CORETYPE" "$(has "$envs" "OPENBLAS_CORETYPE=$best")" "$envs"
    check "re-exec: keeps its name" "$([ "$comm" = "$(basename "$bin" | cut -c1-15)" ]; echo $?)" "comm=$comm"
    json=$(plain LMLAB_TEST_BLAS_CORENAME=Prescott "$bin" bench sample tokens=4 --json)
    check "bench --json: machine event" "$(has "$json" '"event":"machine"')" "$json"
    check "bench --json: kernels and why" "$(has "$json" "\"kernels\":\"$best kernels (chosen by lmlab: OpenBLAS chose Prescott")" "$json"
    check "bench --json: blas_core" "$(has "$json" "\"blas_core\":\"$best\"")" "$json"
    check "bench --json: the sample result" "$(has "$json" '"event":"bench-sample"')" "$json"
    check "bench --json: JSON lines only" "$(grep -vq '^{' <<<"$json"; [ $? = 1 ]; echo $?)" "$json"
    # A stored run records who chose the kernels.
    plain LMLAB_TEST_BLAS_CORENAME=Prescott "$bin" --db "$dir/t.db" \
        -c 'use quick; train steps=2 log_every=1 eval_every=0 sample_every=0 checkpoint_every=0; wait' >/dev/null 2>&1
    run=$(plain "$bin" --db "$dir/t.db" -c 'run 1')
    check "run record: machine names the override" "$(has "$run" "(chosen by lmlab: OpenBLAS chose Prescott")" "$run"
else
    check "no stronger core: no re-exec" "$(has "$out" "OpenBLAS's choice")" "$out"
fi

# The user's own variable always wins, even when weaker.
out=$(plain OPENBLAS_CORETYPE=Prescott LMLAB_TEST_BLAS_CORENAME=Prescott "$bin" -c 'show machine')
check "user's OPENBLAS_CORETYPE wins" "$(has "$out" "kernels  Prescott kernels (OPENBLAS_CORETYPE=Prescott set by the user")" "$out"
check "user's OPENBLAS_CORETYPE in the machine line" "$(has "$out" "(OPENBLAS_CORETYPE=Prescott set by the user)")" "$out"

# Marked as already re-executed: never again, whatever the hook says (no loop).
out=$(plain LMLAB_BLAS_OVERRODE=Haswell LMLAB_TEST_BLAS_CORENAME=Prescott timeout 20 "$bin" -c 'show machine')
check "marked: no second re-exec" "$([ $? = 0 ] && ! grep -q 'chosen by lmlab' <<<"$out"; echo $?)" "$out"
if [ "$best" != Prescott ] && [ -n "$best" ]; then
    check "marked: says it was not overridden" "$(has "$out" "not overridden in this process")" "$out"
fi

# bench: arguments first; --help lists the workloads.
set +e
err=$("$bin" bench small nope 2>&1); rc=$?
set -e
check "bench: unknown workload fails" "$([ $rc != 0 ]; echo $?)" "$err"
check "bench: says which" "$(has "$err" "unknown workload 'nope'")" "$err"
check "bench: nothing ran before the error" "$(grep -q 'machine:' <<<"$err"; [ $? = 1 ]; echo $?)" "$err"
help=$("$bin" bench --help)
check "bench --help lists workloads" "$(has "$help" "workloads: small paper small-msa")" "$help"

# Under a tight address-space limit OpenBLAS's threads used to spin forever (even
# `--help` never exited): now the process restarts with one BLAS thread and says so.
# Not under ASan, whose shadow memory cannot live under any such limit.
if ! ldd "$bin" 2>/dev/null | grep -q libasan; then
    for kb in 100000 150000; do
        set +e
        out=$( (ulimit -v $kb; env -u OPENBLAS_NUM_THREADS timeout -s KILL 30 "$bin" -c help) 2>&1); rc=$?
        set -e
        check "ulimit -v $kb: help exits" "$([ $rc = 0 ]; echo $?)" "rc=$rc $out"
        check "ulimit -v $kb: says one thread" "$(has "$out" "OpenBLAS runs one thread")" "$out"
    done
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
