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
    // gloo says what happened only in words: this is the one place that reads them, at the
    // library's edge, and every layer above sees a type.
    // Pairs served by the I/O thread say "Timed out"; synchronous pairs "Read/Write timeout".
    for (const char* timeout : {"Timed out", "Read timeout", "Write timeout"})
      if (what.find(timeout) != std::string::npos) throw TimeoutError(ctx, "gloo: " + what);
    for (const char* closed : {"Connection closed by peer", "Connection reset by peer", "Broken pipe"})
      if (what.find(closed) != std::string::npos) throw PeerClosedError(ctx, "gloo: " + what);
    throw Error(ctx, "gloo: " + what);
  } catch (const std::exception& e) {
    throw Error(ctx, std::string("gloo: ") + e.what());
  }
}

}  // namespace ringlab
