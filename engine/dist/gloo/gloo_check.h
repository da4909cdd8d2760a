#pragma once
// RINGLAB_GLOO_CHECK(expr, ctx): runs `expr` and turns whatever gloo throws into a ringlab error
// carrying `ctx` (an ErrorContext: rank, collective, step). gloo reports its timeouts as
// IoException("Timed out ..."): those become TimeoutError, everything else Error. ringlab's own
// errors (from the store behind gloo's rendezvous) pass through unchanged.
#include "engine/core/error.h"

namespace ringlab {

// Call only from a catch block: rethrows the exception in flight as a ringlab error.
[[noreturn]] void rethrow_gloo_error(const ErrorContext& ctx);

}  // namespace ringlab

#define RINGLAB_GLOO_CHECK(expr, ctx)            \
  do {                                           \
    try {                                        \
      expr;                                      \
    } catch (...) {                              \
      ::ringlab::rethrow_gloo_error(ctx);        \
    }                                            \
  } while (0)
