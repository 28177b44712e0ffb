#!/usr/bin/env bash
# rank_status.sh DIR COMMAND...: run by mpiexec on every rank; runs COMMAND, writes its exit status to DIR/rank.<R>
# (R: the MPI rank from the launcher's environment) and exits 0, so that the launcher lets every rank finish and
# expect_failure_every_rank.sh can check each rank's own status.
set -u
dir="$1"; shift
rank="${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-unknown}}}"
"$@"
echo $? > "$dir/rank.$rank"
exit 0
