#!/bin/bash
# `ringlab bench allreduce` over gloo, 2 and 4 ranks (one process per rank, TCP on 127.0.0.1): every
# size from 4 B to 4 MiB appears once, with the ring and gloo::allreduce, and no element is wrong.
# Usage: gloo_allreduce.sh <ringlab binary> <source dir>. Exit 77: gloo is not built in.
set -u
source "$(dirname "$0")/lib/allreduce_sweep.bash"
allreduce_sweep "$1" gloo
