#pragma once
// RINGLAB_MPI_CHECK(call, ctx): runs an MPI call and throws ringlab::Error carrying `ctx` (an
// ErrorContext: rank, collective, step) and MPI's own description when it does not return
// MPI_SUCCESS. The group sets MPI_ERRORS_RETURN so that errors come back here instead of
// aborting the job.
#include "engine/dist/mpi/mpi_c.h"

#include <string>

#include "engine/core/error.h"

namespace ringlab {

std::string mpi_error_string(int code);

}  // namespace ringlab

#define RINGLAB_MPI_CHECK(call, ctx)                                                      \
  do {                                                                                    \
    const int ringlab_mpi_rc_ = (call);                                                   \
    if (ringlab_mpi_rc_ != MPI_SUCCESS)                                                   \
      throw ::ringlab::Error((ctx), std::string(#call) + " failed: " +                    \
                                        ::ringlab::mpi_error_string(ringlab_mpi_rc_));    \
  } while (0)
