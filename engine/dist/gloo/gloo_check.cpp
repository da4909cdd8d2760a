#include "engine/dist/gloo/gloo_check.h"

#include <gloo/common/error.h>

#include <string>

namespace ringlab {

void rethrow_gloo_error(const ErrorContext& ctx) {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const gloo::IoException& e) {
    const std::string what = e.what();
    if (what.find("Timed out") != std::string::npos) throw TimeoutError(ctx, "gloo: " + what);
    throw Error(ctx, "gloo: " + what);
  } catch (const std::exception& e) {
    throw Error(ctx, std::string("gloo: ") + e.what());
  }
}

}  // namespace ringlab
