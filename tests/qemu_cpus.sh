#!/bin/bash
# qemu_cpus.sh — the default build on other x86-64 CPUs (issue 50): a short subset of the
# unit tests and `lmlab show machine` under qemu-x86_64 -cpu Nehalem (no AVX: the x86-64
# baseline variants of every CPU_CLONES kernel) and -cpu Haswell (AVX2 and FMA, no
# AVX-512: the x86-64-v3 variants). No SIGILL, each test passes with the tolerances it
# states, test_cpu binds the level that CPU must get, and its digest of the
# level-independent kernels equals this machine's native run bit for bit.
# OpenBLAS picks its kernels from the emulated CPU's cpuid; OPENBLAS_CORETYPE names a core
# that CPU runs, which also keeps lmlab's own re-exec (blas_select.h) from asking for
# another. Skipped (77) without qemu-x86_64 or off x86-64, or in a -march=native build
# (its binaries may not run on those CPUs by design).
# Usage: qemu_cpus.sh LMLAB TESTDIR TEST ...   (TEST: names of test_<name> in TESTDIR)
set -u
lmlab=$1 dir=$2; shift 2
command -v qemu-x86_64 >/dev/null || { echo "qemu-x86_64 not installed: skipped"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "not an x86-64 machine: skipped"; exit 77; }
case ${LMLAB_SANITIZE:-none} in none|"") ;;
    *) echo "a sanitized build ($LMLAB_SANITIZE): skipped (its shadow memory does not map under qemu-user)"; exit 77;; esac
export LMLAB_TEST_CPU_LEVEL= LMLAB_TEST_CPU_DIGEST=
native=$(timeout 60 "$dir/test_cpu") || { echo "FAIL: test_cpu natively"; echo "$native"; exit 1; }
case $native in *"native (-march=native"*) echo "a -march=native build: skipped"; exit 77;; esac
digest=$(sed -n 's/^digest //p' <<<"$native")
echo "native: $(sed -n 's/^cpu level: //p' <<<"$native"), digest $digest"
[ -n "$digest" ] || { echo "FAIL: test_cpu printed no digest"; exit 1; }

fail=0
# CPU  the level its variants must be  the OpenBLAS core it runs
for spec in "Nehalem x86-64 NEHALEM" "Haswell x86-64-v3 HASWELL"; do
    read -r cpu level core <<<"$spec"   # bounded: a here-string
    export OPENBLAS_CORETYPE=$core LMLAB_TEST_CPU_LEVEL=$level LMLAB_TEST_CPU_DIGEST=$digest
    for t in cpu "$@"; do
        start=$SECONDS
        out=$(timeout 150 qemu-x86_64 -cpu "$cpu" "$dir/test_$t" 2>&1)
        rc=$?
        if [ $rc -ne 0 ]; then
            why="exit $rc"
            [ $rc -eq 132 ] && why="SIGILL: an instruction this CPU lacks"
            [ $rc -eq 124 ] && why="did not end within 150 s"
            echo "FAIL: test_$t under -cpu $cpu: $why"
            tail -20 <<<"$out"
            fail=1
        else
            echo "ok   test_$t under -cpu $cpu ($((SECONDS - start)) s): $(tail -1 <<<"$out")"
        fi
    done
    out=$(timeout 120 qemu-x86_64 -cpu "$cpu" "$lmlab" show machine 2>&1)
    rc=$?
    if [ $rc -ne 0 ] || ! grep -q "^  elementwise  $level (" <<<"$out"; then
        echo "FAIL: lmlab show machine under -cpu $cpu (exit $rc) does not name $level:"
        echo "$out"
        fail=1
    else
        echo "ok   lmlab show machine under -cpu $cpu: $(grep '^  elementwise' <<<"$out")"
    fi
done
exit $fail
