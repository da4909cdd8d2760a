#pragma once
// Errors at the engine's boundary carry where they happened: rank, collective, step.
#include <stdexcept>
#include <string>

namespace ringlab {

struct ErrorContext {
  int rank = -1;              // -1: not a rank (controller, tool)
  std::string collective;     // e.g. "ring_allreduce", "store.get"
  long long step = -1;        // training step or ring step, -1 when none
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
  Error(const ErrorContext& ctx, const std::string& what)
      : std::runtime_error(describe(ctx, what)), context_(ctx) {}
  const ErrorContext& context() const { return context_; }

  static std::string describe(const ErrorContext& ctx, const std::string& what) {
    std::string prefix;
    if (ctx.rank >= 0) prefix += "rank " + std::to_string(ctx.rank) + ": ";
    if (!ctx.collective.empty()) prefix += ctx.collective + ": ";
    if (ctx.step >= 0) prefix += "step " + std::to_string(ctx.step) + ": ";
    return prefix + what;
  }

 private:
  ErrorContext context_;
};

// A blocking wait ran past its timeout.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

// A peer's connection closed under a send or a receive (it died, or dropped its connections).
class PeerClosedError : public Error {
 public:
  using Error::Error;
};

// A server (the store, the event server) refused the token its client gave.
class TokenRefusedError : public Error {
 public:
  using Error::Error;
};

// A host name this machine cannot resolve (a typo, or a name only other machines know).
class HostNotFoundError : public Error {
 public:
  using Error::Error;
};

// Bad user input (flags, files): the CLI prints it as one line and exits non-zero.
class InputError : public Error {
 public:
  using Error::Error;
};

// A JSON library error's own words, without the "[json.exception.type_error.302] " that names
// its internal category: a person reading the message cannot act on that part.
inline std::string json_error_words(const std::exception& e) {
  const std::string what = e.what();
  const size_t end = what.starts_with("[json.exception") ? what.find("] ") : std::string::npos;
  return end == std::string::npos ? what : what.substr(end + 2);
}

}  // namespace ringlab
