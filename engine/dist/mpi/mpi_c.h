#pragma once
// MPI's C API only. OpenMPI's mpi.h also pulls in the long-deprecated C++ bindings when compiled
// as C++, which would need libmpi_cxx; ringlab links the C library alone.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
