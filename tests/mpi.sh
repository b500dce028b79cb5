# mpi.sh — sourced by the end-to-end scripts that run lmlab under mpirun (e2e_diag.sh,
# e2e_mpi_cores.sh, e2e_shards.sh, e2e_determinism.sh): Open MPI set up for this machine (no ssh: plm
# isolated, the shared-memory btl, more ranks than cores allowed, root allowed), the one
# check whether the mpirun parts can run here, saying why they are skipped when not, and
# the one way to call mpirun. Sourced after `L=` is set; it runs nothing itself.
export OMPI_MCA_plm=isolated OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# mpi_usable LMLAB WHAT: 0 when mpirun is installed and LMLAB was built with MPI; else
# prints "skip WHAT: " and the reason (what to install or how to build) and returns 1.
mpi_usable() {
    if ! command -v mpirun >/dev/null; then
        echo "skip $2: mpirun not found (apt-get install openmpi-bin)"
        return 1
    fi
    if timeout 60 mpirun --oversubscribe -np 2 "$1" --version 2>&1 | grep -q "built without MPI"; then
        echo "skip $2: this lmlab was built without MPI (meson setup -Dmpi=enabled)"
        return 1
    fi
}

# mpi_run SECONDS NP COMMAND [ARG ...]: COMMAND as NP ranks of mpirun (oversubscribed,
# root allowed), ended after SECONDS (timeout's status 124 then).
mpi_run() {
    local secs=$1 np=$2
    shift 2
    timeout "$secs" mpirun --allow-run-as-root --oversubscribe -np "$np" "$@"
}
