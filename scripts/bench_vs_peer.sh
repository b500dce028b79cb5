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
set -euo pipefail
cd "$(dirname "$0")/.."
LMLAB=${LMLAB:-build/app/lmlab}
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
