#!/usr/bin/env bash
# bench_builds.sh — two lmlab builds side by side on the same bench workloads, alternating
# A B A B (so a drift of the machine's speed hits both): e.g. the default build (run-time
# choice of CPU code, cpu.h) against a -Dnative=true build of the same source.
# Usage: scripts/bench_builds.sh BUILD_A BUILD_B [--runs N] [--threads N] [--steps N] [--precision P]
#        [WORKLOAD ...]   (BUILD: a build directory or an lmlab binary; default workloads
#        small paper; runs 3; threads, steps: bench's default; precision: the workload's,
#        fp32 for small and paper, an experiment's recipe for EXPERIMENT).
# Prints, per run and workload, each build's tokens/s and CPU milliseconds per step (bench's
# "CPU time ... a step (all threads)"), then the median of the paired ratios A/B of both.
# On a shared machine the wall-clock tokens/s measure the neighbours too: CPU time per step
# is the steadier figure; with --threads 1 no thread waits for a descheduled partner.
set -euo pipefail
bin_of() { if [ -d "$1" ]; then echo "$1/app/lmlab"; else echo "$1"; fi; }
[ $# -ge 2 ] || { echo "usage: $0 BUILD_A BUILD_B [--runs N] [--threads N] [--steps N] [--precision fp32|bf16] [WORKLOAD ...]" >&2; exit 2; }
A=$(bin_of "$1") B=$(bin_of "$2"); shift 2
runs=3 threads= steps= precision= work=()
while [ $# -gt 0 ]; do
    case $1 in
        --runs) runs=$2; shift 2;;
        --threads) threads=$2; shift 2;;
        --steps) steps=$2; shift 2;;
        --precision) precision=$2; shift 2;;
        -*) echo "unknown option $1" >&2; exit 2;;
        *) work+=("$1"); shift;;
    esac
done
[ ${#work[@]} -gt 0 ] || work=(small paper)
for b in "$A" "$B"; do [ -x "$b" ] || { echo "not an lmlab binary: $b" >&2; exit 2; }; done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# one bench of workload $2 with binary $1: prints "tok/s cpu_ms"
one() {
    local script="$tmp/b.lmlab" out
    { [ -n "$threads" ] && echo "set threads=$threads"
      echo "bench $2${steps:+ steps=$steps}${precision:+ precision=$precision}"; } > "$script"
    out=$("$1" "$script" 2>&1)
    local tok cpu
    tok=$(awk -v w="$2" '$1 == w { for (i = 1; i < NF; i++) if ($(i + 1) == "tok/s") print $i }' <<<"$out" | head -1)
    cpu=$(sed -n 's/.*CPU time \([0-9.]*\) ms a step.*/\1/p' <<<"$out" | head -1)
    echo "${tok:-0} ${cpu:-0}"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "A = $A"
echo "B = $B"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)${threads:+, threads=$threads}${precision:+, precision=$precision}"
for w in "${work[@]}"; do
    : > "$tmp/tok" ; : > "$tmp/cpu"
    for ((r = 1; r <= runs; r++)); do
        read -r ta ca <<<"$(one "$A" "$w")"   # bounded: a here-string
        read -r tb cb <<<"$(one "$B" "$w")"   # bounded: a here-string
        printf '%-8s run %d  A %8s tok/s %8s ms CPU/step   B %8s tok/s %8s ms CPU/step\n' \
            "$w" "$r" "$ta" "$ca" "$tb" "$cb"
        awk -v a="$ta" -v b="$tb" 'BEGIN { if (b > 0) print a / b }' >> "$tmp/tok"
        awk -v a="$ca" -v b="$cb" 'BEGIN { if (b > 0) print a / b }' >> "$tmp/cpu"
    done
    printf '%-8s median A/B: tokens/s %.3f, CPU per step %.3f (below 1: A cheaper)\n' "$w" \
        "$(median < "$tmp/tok")" "$(median < "$tmp/cpu")"
done
