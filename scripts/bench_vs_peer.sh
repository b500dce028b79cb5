#!/usr/bin/env bash
# Runs lmlab's bench and the PyTorch peer (the seed's models in PyTorch, Debian's
# python3-torch, 2 threads) side by side on the same workloads in one run, twice: first
# with the environment as the user has it (whatever OPENBLAS_CORETYPE says, or nothing),
# then with the best OpenBLAS kernels for this CPU forced on both (OPENBLAS_CORETYPE set to
# the core `lmlab show machine` names as best). Prints tokens/s, peak memory, % of the sgemm
# peak and the ratios: lmlab/peer in each setting, and each program's as-is/forced speed
# (lmlab picks the best kernels by itself, so its as-is/forced should be about 1).
# Usage: scripts/bench_vs_peer.sh [WORKLOAD ...]   (default: small small-msa paper paper-msa
#        and the sequence-length scan). PEER=/path/to/torch_ref.py, LMLAB=/path/to/lmlab.
# Needs python3-torch for the peer (apt-get install python3-torch); lmlab itself does not.
#
# nanoGPT mode: scripts/bench_vs_peer.sh --nanogpt DIR [--shape small|wide] [--threads N]
#                                          [--runs N] [--iters N]
#   DIR is a checkout of karpathy/nanoGPT (the project neither ships nor needs it). Copies
#   it to a temporary folder, prepares shakespeare_char from data/tinyshakespeare.txt there
#   (its own prepare.py), then alternates N times (default 3): lmlab's bench and nanoGPT's
#   train.py (its README's CPU flags, dropout 0) for --iters iterations (default 60) on
#   the same shape: small = `bench small-msa` (4 layers, 4 heads, d=128, block 64, batch
#   12, V=65), wide = `bench wide-msa` (6 layers, 6 heads, d=192, block 128, batch 16).
#   nanoGPT's tokens/s = B x T / its median iteration time, iterations 0-4 (the first
#   evaluation, warm-up) left out. On a shared machine wall time measures the neighbours
#   too, so each side's tokens per CPU-second is printed as well: lmlab's from bench (CPU
#   time of its steps), nanoGPT's from /usr/bin/time on two runs of train.py, --iters and
#   5 iterations, the CPU time of the difference over the iterations between (start-up,
#   data loading and the first evaluation cancel out). --threads N runs both on N threads
#   (lmlab's `set threads=N`, torch's OMP_NUM_THREADS=N; default: each program's own default):
#   with 1 no thread waits for a descheduled partner, the fairest per-CPU-second figure on
#   a shared machine. Prints both per run and the ratios, then the FLOP ceiling: the
#   model's FLOPs a token (lmlab's count; both train the same model) times each program's
#   tokens per CPU-second, as a share of the sgemm peak of one thread bench samples between
#   its steps, and so the largest ratio per CPU-second this CPU allows (100% / nanoGPT's
#   share). The temporary folder is removed.
set -euo pipefail
cd "$(dirname "$0")/.."
LMLAB=${LMLAB:-build/app/lmlab}

# nanoGPT's train.py in $tmp on shape "$1" for $2 iterations: prints its tokens/s (median
# iteration, 0-4 left out) and the process's CPU seconds (user + system), or "0 0".
nanogpt_run() {
    local shape=$1 iters=$2 out cpu
    out=$(cd "$tmp" && ${NG_THREADS:+env OMP_NUM_THREADS=$NG_THREADS} \
            /usr/bin/time -f 'CPU %U %S' /usr/bin/python3 train.py \
            config/train_shakespeare_char.py --device=cpu --compile=False --eval_iters=20 \
            --log_interval=1 --block_size="$NG_T" --batch_size="$NG_B" --n_layer="$NG_L" \
            --n_head="$NG_H" --n_embd="$NG_D" --max_iters="$iters" --lr_decay_iters="$iters" \
            --dropout=0.0 --out_dir="$tmp/out" 2>&1) || true
    cpu=$(printf "%s\n" "$out" | awk '$1 == "CPU" { printf "%.3f", $2 + $3 }')
    printf "%s %s\n" "$(printf "%s\n" "$out" |
        sed -n 's/^iter \([0-9]*\): .* time \([0-9.]*\)ms.*/\1 \2/p' |
        awk '$1 >= 5 { print $2 }' | sort -g |
        awk -v bt=$((NG_B * NG_T)) '{ t[NR] = $1 } END { if (NR) printf "%.1f", bt / (t[int((NR + 1) / 2)] / 1000); else print 0 }')" \
        "${cpu:-0}"
}

median() { sort -g | awk '{ t[NR] = $1 } END { print (NR ? t[int((NR + 1) / 2)] : 0) }'; }

nanogpt_compare() {
    local src=$1 runs=$2 iters=$3 shape=$4 threads=$5 workload
    case $shape in
        small) workload=small-msa NG_L=4 NG_H=4 NG_D=128 NG_T=64 NG_B=12 ;;
        wide) workload=wide-msa NG_L=6 NG_H=6 NG_D=192 NG_T=128 NG_B=16 ;;
        *) echo "--shape must be small or wide, not '$shape'"; exit 2 ;;
    esac
    [ -f "$src/train.py" ] && [ -f "$src/data/shakespeare_char/prepare.py" ] || {
        echo "$src is not a nanoGPT checkout (no train.py or data/shakespeare_char/prepare.py)"; exit 2; }
    [ -x "$LMLAB" ] || { echo "build lmlab first (ninja -C build)"; exit 1; }
    [ -x /usr/bin/time ] || { echo "nanoGPT's CPU time needs /usr/bin/time: apt-get install time"; exit 1; }
    /usr/bin/python3 -c 'import torch, numpy' 2>/dev/null || {
        echo "nanoGPT needs PyTorch and numpy: apt-get install python3-torch python3-numpy"; exit 1; }
    tmp=$(mktemp -d /tmp/lmlab_nanogpt_XXXXXX)   # global: the EXIT trap removes it
    trap 'rm -rf "$tmp"' EXIT
    cp -r "$src"/. "$tmp"/
    cp data/tinyshakespeare.txt "$tmp/data/shakespeare_char/input.txt"
    (cd "$tmp/data/shakespeare_char" && /usr/bin/python3 prepare.py >/dev/null)
    NG_THREADS=$threads
    echo "nanoGPT from $src (prepared in $tmp); shape $shape ($workload: L=$NG_L H=$NG_H d=$NG_D T=$NG_T B=$NG_B); threads: ${threads:-as each program sets}; $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
    printf "%-4s %11s %13s %7s %15s %17s %7s\n" run "lmlab tok/s" "nanoGPT tok/s" ratio \
        "lmlab tok/CPU-s" "nanoGPT tok/CPU-s" ratio
    local ratios=() cratios=() fpt=() peaks=() lcpu=() ncpu=() best_l=0 best_n=0
    for r in $(seq 1 "$runs"); do
        local js tl cl tn cn c5 ratio cratio
        if [ -n "$threads" ]; then
            js=$("$LMLAB" -c "set threads=$threads; bench $workload --json" | grep '"event": *"bench"')
        else
            js=$("$LMLAB" bench "$workload" --json | grep '"event": *"bench"')
        fi
        tl=$(printf "%s" "$js" | sed -n 's/.*"tokens_per_s": *\([0-9.eE+-]*\).*/\1/p')
        cl=$(printf "%s" "$js" | sed -n 's/.*"tokens_per_cpu_s": *\([0-9.eE+-]*\).*/\1/p')
        # the FLOP ceiling: lmlab's FLOPs a token (the same model as nanoGPT's) and the sgemm
        # peak bench sampled between its steps, per thread (= per CPU-second)
        fl=$(printf "%s" "$js" | sed -n 's/.*"gflops": *\([0-9.eE+-]*\).*/\1/p')
        pk=$(printf "%s" "$js" | sed -n 's/.*"peak_gflops": *\([0-9.eE+-]*\).*/\1/p')
        pt=$(printf "%s" "$js" | sed -n 's/.*"peak_threads": *\([0-9]*\).*/\1/p')
        fpt+=("$(awk -v g="${fl:-0}" -v t="${tl:-0}" 'BEGIN { printf "%.6g", (t > 0 ? g * 1e9 / t : 0) }')")
        peaks+=("$(awk -v p="${pk:-0}" -v n="${pt:-1}" 'BEGIN { printf "%.6g", (n > 0 ? p / n : 0) }')")
        read -r tn c5 < <(nanogpt_run "$shape" 5)
        read -r tn cn < <(nanogpt_run "$shape" "$iters")
        # iterations 6..iters cost cn - c5 CPU seconds
        cn=$(awk -v a="$cn" -v b="$c5" -v n=$((iters - 5)) -v bt=$((NG_B * NG_T)) \
             'BEGIN { printf "%.1f", (a > b ? n * bt / (a - b) : 0) }')
        ratio=$(awk -v a="${tl:-0}" -v b="${tn:-0}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
        cratio=$(awk -v a="${cl:-0}" -v b="$cn" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
        ratios+=("$ratio"); cratios+=("$cratio")
        lcpu+=("${cl:-0}"); ncpu+=("$cn")
        best_l=$(awk -v a="$best_l" -v b="${tl:-0}" 'BEGIN { print (b > a ? b : a) }')
        best_n=$(awk -v a="$best_n" -v b="${tn:-0}" 'BEGIN { print (b > a ? b : a) }')
        printf "%-4s %11.0f %13.0f %6sx %15.0f %17.0f %6sx\n" "$r" "${tl:-0}" "${tn:-0}" \
            "$ratio" "${cl:-0}" "$cn" "$cratio"
    done
    printf "median over %s runs: %sx in wall time, %sx per CPU-second; load after: %s\n" \
        "$runs" "$(printf "%s\n" "${ratios[@]}" | median)" "$(printf "%s\n" "${cratios[@]}" | median)" \
        "$(cut -d' ' -f1-3 /proc/loadavg)"
    awk -v a="$best_l" -v b="$best_n" 'BEGIN { printf "best of each: lmlab %.0f, nanoGPT %.0f tok/s: %.2fx (the least disturbed runs, for a loaded machine)\n", a, b, (b > 0 ? a / b : 0) }'
    # What the CPU allows: no program does more FLOPs per CPU-second than the sgemm peak of
    # one thread, so lmlab can be at most (peak / nanoGPT's FLOP rate) ahead per CPU-second.
    awk -v f="$(printf "%s\n" "${fpt[@]}" | median)" -v p="$(printf "%s\n" "${peaks[@]}" | median)" \
        -v l="$(printf "%s\n" "${lcpu[@]}" | median)" -v n="$(printf "%s\n" "${ncpu[@]}" | median)" 'BEGIN {
        if (f <= 0 || p <= 0 || n <= 0) { print "FLOP ceiling: not computed (no FLOP count, peak or nanoGPT CPU time)"; exit }
        gl = l * f / 1e9; gn = n * f / 1e9; c = p / gn
        printf "FLOP ceiling (medians): %.2f MFLOP a token (lmlab'"'"'s count of the model both train); sgemm peak %.1f GFLOP/s a thread (bench, between its steps)\n", f / 1e6, p
        printf "  lmlab   %.0f tok/CPU-s x %.2f MFLOP = %.1f GFLOP/s = %.0f%% of the peak\n", l, f / 1e6, gl, 100 * gl / p
        printf "  nanoGPT %.0f tok/CPU-s x %.2f MFLOP = %.1f GFLOP/s = %.0f%% of the peak\n", n, f / 1e6, gn, 100 * gn / p
        printf "  at most %.2fx per CPU-second is possible (100%% / %.0f%%); lmlab'"'"'s %.2fx is %.0f%% / %.0f%%; 2.0x needs lmlab at %.0f%% of the peak\n", c, 100 * gn / p, l / n, 100 * gl / p, 100 * gn / p, 200 * gn / p
    }'
}

if [ "${1:-}" = --nanogpt ]; then
    [ $# -ge 2 ] || { echo "usage: $0 --nanogpt DIR [--shape small|wide] [--threads N] [--runs N] [--iters N]"; exit 2; }
    dir=$2 runs=3 iters=60 shape=small threads=""
    shift 2
    while [ $# -gt 0 ]; do
        case $1 in
            --runs) runs=${2:?--runs needs a number}; shift 2 ;;
            --iters) iters=${2:?--iters needs a number}; shift 2 ;;
            --shape) shape=${2:?--shape needs small or wide}; shift 2 ;;
            --threads) threads=${2:?--threads needs a number}; shift 2 ;;
            *) echo "unknown argument '$1' (usage: $0 --nanogpt DIR [--shape small|wide] [--threads N] [--runs N] [--iters N])"; exit 2 ;;
        esac
    done
    [[ $runs =~ ^[1-9][0-9]*$ && $iters =~ ^[1-9][0-9]*$ && $iters -gt 5 ]] || {
        echo "--runs must be >= 1 and --iters > 5"; exit 2; }
    [[ -z $threads || $threads =~ ^[1-9][0-9]*$ ]] || { echo "--threads must be a number >= 1"; exit 2; }
    nanogpt_compare "$dir" "$runs" "$iters" "$shape" "$threads"
    exit 0
fi
PEER=${PEER:-../shared/peer/torch_ref.py}
[ -x "$LMLAB" ] || { echo "build lmlab first (scripts/test.sh or ninja -C build)"; exit 1; }
[ -f "$PEER" ] || { echo "the PyTorch peer is not at $PEER (set PEER=)"; exit 1; }
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(small small-msa paper paper-msa scan-dispatcher-256 \
    scan-msa-256 scan-dispatcher-1024 scan-msa-1024 scan-dispatcher-4096 scan-msa-4096)

peer_args() {
    local w=$1 kind=dispatcher heads=1
    [[ $w == *msa* ]] && kind=msa
    case $w in
        small) echo "--kind dispatcher --ntoken 65 --d 128 --nhid 512 --layers 4 --bptt 64 --batch 12 --steps 20" ;;
        small-msa) echo "--kind msa --heads 4 --ntoken 65 --d 128 --nhid 512 --layers 4 --bptt 64 --batch 12 --steps 20" ;;
        paper) echo "--kind dispatcher --ntoken 28782 --d 512 --nhid 512 --layers 6 --bptt 512 --batch 20 --steps 3" ;;
        paper-msa) echo "--kind msa --heads 8 --ntoken 28782 --d 512 --nhid 512 --layers 6 --bptt 512 --batch 20 --steps 3" ;;
        scan-*) local T=${w##*-}; [[ $kind == msa ]] && heads=4
                echo "--kind $kind --heads $heads --ntoken 65 --d 128 --nhid 512 --layers 4 --bptt $T --batch $((8192 / T)) --steps 4" ;;
    esac
}
field() { sed -n "s/.*\"$1\": *\"\{0,1\}\([^,\"}]*\).*/\1/p" | head -1; }

best=$(env -u OPENBLAS_CORETYPE "$LMLAB" -c 'show machine' | sed -n 's/^best *\([A-Za-z0-9_]*\).*/\1/p')
echo "user's OPENBLAS_CORETYPE: ${OPENBLAS_CORETYPE:-(unset)}; best core for this CPU: ${best:-?}"
# Workload by workload, the two settings back to back (lmlab, peer, lmlab forced, peer
# forced), so a drift in the machine's speed hits both settings alike; tables after.
declare -A TL TP ROW
for w in "${workloads[@]}"; do
    for mode in as-is forced; do
        run=()
        [ "$mode" = forced ] && run=(env OPENBLAS_CORETYPE="$best")
        all=$("${run[@]}" "$LMLAB" bench "$w" --json)
        ours=$(grep '"event": *"bench"' <<<"$all" || true)
        mach=$(grep '"event": *"machine"' <<<"$all" || true)
        tl=$(field tokens_per_s <<<"$ours"); ml=$(field peak_rss_kb <<<"$ours")
        frac=$(field peak_fraction <<<"$ours"); core=$(field blas_core <<<"$mach")
        peak=$(field sgemm_gflops <<<"$mach")
        out=$( { "${run[@]}" /usr/bin/time -f 'maxrss %M' /usr/bin/python3 "$PEER" $(peer_args "$w") --threads 2; } 2>&1 || true)
        tp=$(sed -n 's/.*"tokens_per_s": *\([0-9.eE+-]*\).*/\1/p' <<<"$out")
        mp=$(sed -n 's/^maxrss \([0-9]*\)/\1/p' <<<"$out")
        TL[$mode,$w]=${tl:-0}; TP[$mode,$w]=${tp:-0}
        ROW[$mode,$w]=$(awk -v w="$w" -v tl="${tl:-0}" -v tp="${tp:-0}" -v ml="${ml:-0}" \
            -v mp="${mp:-0}" -v f="${frac:-0}" -v c="$core" -v p="${peak:-0}" 'BEGIN {
            printf "%-22s %12.0f %12.0f %7.2fx %10.0f %10.0f %6.0f%% %s (%.0f)", w, tl, tp,
                   (tp > 0 ? tl / tp : 0), ml / 1024, mp / 1024, 100 * f, c, p }')
        [ -n "$tp" ] || ROW[$mode,$w]+="  (peer failed: $(tail -1 <<<"$out"))"
    done
done
for mode in as-is forced; do
    echo
    [ "$mode" = forced ] && echo "== forced: OPENBLAS_CORETYPE=$best on both" \
        || echo "== as-is: the environment as the user has it"
    printf "%-22s %12s %12s %8s %10s %10s %7s %s\n" workload "lmlab tok/s" "peer tok/s" ratio \
        "lmlab MiB" "peer MiB" "%sgemm" "lmlab kernels (sgemm GFLOP/s)"
    for w in "${workloads[@]}"; do echo "${ROW[$mode,$w]}"; done
done
echo
echo "== as-is / forced (1.00 = the environment costs nothing; lmlab's target: >= 0.90)"
printf "%-22s %10s %10s\n" workload lmlab peer
for w in "${workloads[@]}"; do
    awk -v w="$w" -v a="${TL[as-is,$w]}" -v b="${TL[forced,$w]}" -v c="${TP[as-is,$w]}" \
        -v d="${TP[forced,$w]}" 'BEGIN { printf "%-22s %9.2fx %9.2fx\n", w,
        (b > 0 ? a / b : 0), (d > 0 ? c / d : 0) }'
done
echo "targets (issue 14): lmlab >= 75% of the sgemm peak on small, >= 90% on paper; against the peer,"
echo "on a CPU whose OpenBLAS falls back to Prescott: small >= 12x as-is and >= 7x forced, paper >= 4x"
echo "and >= 2.3x (where OpenBLAS picks the right core by itself, as-is and forced are the same setting)"
