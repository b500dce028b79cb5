#!/usr/bin/env bash
# e2e_mpi_cores.sh — the machine record of a run trained under `mpirun -np 2` says the cores
# the run used (all ranks, and per rank), not one rank's share ("1 cores", issue 49).
# Exits 77 (skipped) when mpirun is absent or lmlab was built without MPI. No timing.
set -uo pipefail
. "$(dirname "$0")/e2e_lib.sh"   # ok, bad, check and FAILS
. "$(dirname "$0")/bounded.sh"
L=$(realpath "$1")
. "$(dirname "$0")/mpi.sh"   # Open MPI's environment, mpi_usable, mpi_run
mpi_usable "$L" "e2e_mpi_cores" || exit 77
W=$(mktemp -d /tmp/lmlab_mpicores_XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cd "$W" || exit 1
mpi_run 300 2 "$L" --db a.db train quick steps=2 threads=1 runs_dir=runs >train.txt 2>&1
"$L" --db a.db -c "run 1" >run.txt 2>&1
grep machine run.txt
check "run trained under -np 2 is stored" grep -q "machine:" run.txt
check "machine says the cores of all ranks and per rank" \
    grep -Eq "machine: +[0-9]+ cores in all \([0-9]+ per rank x 2 ranks\)" run.txt
# the total is the ranks' shares summed: at least one core per rank
total=$(sed -nE 's/.*machine: +([0-9]+) cores in all.*/\1/p' run.txt)
check "cores in all >= 2 (got '${total}')" test "${total:-0}" -ge 2
check "machine still names the process group" grep -q "; mpi 2 ranks on " run.txt
check "no '1 cores' for a 2-rank run" bash -c "! grep -q 'machine: *1 cores' run.txt"
[ $FAILS = 0 ] || { cat train.txt run.txt; exit 1; }
