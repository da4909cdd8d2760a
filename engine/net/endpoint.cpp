#include "engine/net/endpoint.h"

#include <cctype>
#include <charconv>
#include <random>

#include <fmt/core.h>

#include "engine/core/error.h"

namespace ringlab::net {

uint16_t parse_port(const std::string& text, const std::string& what) {
  long long port = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, port);
  if (text.empty() || ec != std::errc() || ptr != end || port < 1 || port > 65535)
    throw InputError(what + ": the port must be a number in 1..65535");
  return static_cast<uint16_t>(port);
}

Endpoint parse_endpoint(const std::string& text, const std::string& what) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw InputError(what + ": expected host:port, e.g. 127.0.0.1:29600 or [::1]:29600");
  std::string host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 2 || host.back() != ']') throw InputError(what + ": an IPv6 host goes in brackets, e.g. [::1]:29600");
    host = host.substr(1, host.size() - 2);
    if (host.empty()) throw InputError(what + ": the host is empty");
  } else if (host.find(':') != std::string::npos) {
    throw InputError(what + ": an IPv6 host goes in brackets, e.g. [::1]:29600");
  }
  return {host, parse_port(text.substr(colon + 1), what)};
}

bool is_loopback(const std::string& host) {
  std::string h = host;
  for (char& c : h) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return h == "localhost" || h.starts_with("localhost.") || h.starts_with("127.") || h == "::1";
}

std::string random_token(size_t bytes) {
  std::random_device source;
  std::string hex;
  for (size_t i = 0; i < bytes; ++i) hex += fmt::format("{:02x}", source() & 0xFF);
  return hex;
}

}  // namespace ringlab::net
