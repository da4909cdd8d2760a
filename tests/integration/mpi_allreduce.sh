#!/bin/bash
# `ringlab bench allreduce` over OpenMPI, 2 and 4 ranks (mpirun, one process per rank): every
# size from 4 B to 4 MiB appears once, with the ring and MPI_Allreduce, and no element is wrong.
# Usage: mpi_allreduce.sh <ringlab binary> <source dir>. Exit 77: MPI is not built in or mpirun
# is missing.
set -u
source "$(dirname "$0")/lib/allreduce_sweep.bash"
allreduce_sweep "$1" mpi
