#!/usr/bin/env bash
# Runs lmlab's bench and the PyTorch peer (the seed's models in PyTorch, Debian's
# python3-torch, 2 threads) on the same workloads, one after the other on this machine,
# and prints tokens/s, peak memory and the ratios against the issue's targets.
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
field() { sed -n "s/.*\"$1\": *\([0-9.eE+-]*\).*/\1/p" | head -1; }

printf "%-22s %12s %12s %8s %10s %10s %9s\n" workload "lmlab tok/s" "peer tok/s" ratio \
    "lmlab MiB" "peer MiB" "%sgemm"
for w in "${workloads[@]}"; do
    ours=$("$LMLAB" --json bench "$w" | grep '"event": *"bench"' || true)
    peak=$("$LMLAB" --json bench sample tokens=8 | field sgemm_gflops)
    tl=$(echo "$ours" | field tokens_per_s); ml=$(echo "$ours" | field peak_rss_kb)
    frac=$(echo "$ours" | field peak_fraction)
    out=$( { /usr/bin/time -f 'maxrss %M' /usr/bin/python3 "$PEER" $(peer_args "$w") --threads 2; } 2>&1 )
    tp=$(echo "$out" | sed -n 's/.*"tokens_per_s": *\([0-9.eE+-]*\).*/\1/p')
    mp=$(echo "$out" | sed -n 's/^maxrss \([0-9]*\)/\1/p')
    awk -v w="$w" -v tl="$tl" -v tp="$tp" -v ml="$ml" -v mp="$mp" -v f="$frac" 'BEGIN {
        printf "%-22s %12.0f %12.0f %7.2fx %10.0f %10.0f %8.0f%%\n", w, tl, tp, (tp > 0 ? tl / tp : 0),
               ml / 1024, mp / 1024, 100 * f }'
done
echo "sgemm peak (this run): ${peak:-?} GFLOP/s"
echo "targets: small >= 4x, paper >= 1.5x and >= 75% of the sgemm peak, paper memory <= peer's"
