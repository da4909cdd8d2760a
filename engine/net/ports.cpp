#include "engine/net/ports.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include <fmt/core.h>
#include <fmt/format.h>

#include "engine/core/error.h"

namespace ringlab {
namespace {

ErrorContext port_context() { return ErrorContext{-1, "pick_free_port", -1}; }

// The port number inside an IPv4 or IPv6 socket address, in host byte order.
uint16_t port_of(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(addr).sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in&>(addr).sin_port);
}

// Binds one candidate address on port 0; returns the chosen port, or 0 and sets `error`.
uint16_t bind_port_zero(const addrinfo& ai, int& error) {
  int fd = ::socket(ai.ai_family, ai.ai_socktype | SOCK_CLOEXEC, ai.ai_protocol);
  if (fd < 0) {
    error = errno;
    return 0;
  }
  uint16_t port = 0;
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  if (::bind(fd, ai.ai_addr, ai.ai_addrlen) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) == 0) {
    port = port_of(bound);
  } else {
    error = errno;
  }
  ::close(fd);
  return port;
}

// Whether `port` on the candidate address can be bound now.
bool can_bind(const addrinfo& ai, uint16_t port) {
  sockaddr_storage addr{};
  std::memcpy(&addr, ai.ai_addr, ai.ai_addrlen);
  if (addr.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6&>(addr).sin6_port = htons(port);
  else reinterpret_cast<sockaddr_in&>(addr).sin_port = htons(port);
  const int fd = ::socket(ai.ai_family, ai.ai_socktype | SOCK_CLOEXEC, ai.ai_protocol);
  if (fd < 0) return false;
  const bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), ai.ai_addrlen) == 0;
  ::close(fd);
  return ok;
}

// The first port of the kernel's ephemeral range, which outgoing connections draw from
// (/proc/sys/net/ipv4/ip_local_port_range); Linux's default when it cannot be read.
uint16_t ephemeral_start() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0, high = 0;
  if (in >> low >> high && low > 2048 && low <= 65535) return static_cast<uint16_t>(low);
  return 32768;
}

// getaddrinfo for `host`, port 0, TCP; throws InputError naming the host.
addrinfo* resolve(const std::string& host) {
  if (host.empty()) throw InputError(port_context(), "host is empty: give an address such as 127.0.0.1");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), "0", &hints, &found);
  if (rc != 0) throw InputError(port_context(), "cannot resolve host '" + host + "': " + ::gai_strerror(rc));
  return found;
}

}  // namespace

uint16_t pick_free_port(const std::string& host) {
  addrinfo* found = resolve(host);
  int error = 0;
  uint16_t port = 0;
  for (addrinfo* ai = found; ai != nullptr && port == 0; ai = ai->ai_next) {
    port = bind_port_zero(*ai, error);
  }
  ::freeaddrinfo(found);
  if (port == 0) {
    throw Error(port_context(), "cannot bind a TCP port on '" + host + "': " + std::strerror(error));
  }
  return port;
}

uint16_t pick_port_for_a_child(const std::string& host) {
  addrinfo* found = resolve(host);
  const uint16_t end = ephemeral_start();
  const uint16_t begin = end / 2;
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> candidate(begin, end - 1);
  uint16_t port = 0;
  for (int tries = 0; tries < 64 && port == 0 && found; ++tries) {
    const auto p = static_cast<uint16_t>(candidate(random));
    if (can_bind(*found, p)) port = p;
  }
  ::freeaddrinfo(found);
  return port != 0 ? port : pick_free_port(host);
}

std::vector<std::string> wildcard_listen_addresses(const std::string& host) {
  in_addr v4{};
  in6_addr v6{};
  const bool any_v4 = ::inet_pton(AF_INET, host.c_str(), &v4) == 1 && v4.s_addr == htonl(INADDR_ANY);
  const bool any_v6 = ::inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_UNSPECIFIED(&v6);
  std::vector<std::string> found;
  ifaddrs* list = nullptr;
  if ((!any_v4 && !any_v6) || ::getifaddrs(&list) != 0) return found;
  for (const ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr) continue;
    const int family = i->ifa_addr->sa_family;
    if (family != AF_INET && !(family == AF_INET6 && any_v6)) continue;
    char text[INET6_ADDRSTRLEN] = "";
    const void* addr = family == AF_INET ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr)
                                         : &reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr;
    if (::inet_ntop(family, addr, text, sizeof text)) found.push_back(fmt::format("{} ({})", text, i->ifa_name));
  }
  ::freeifaddrs(list);
  return found;
}

std::string exposure_warning(const std::string& master_addr) {
  const std::vector<std::string> reach = wildcard_listen_addresses(master_addr);
  if (reach.empty()) return "";
  return fmt::format("warning: --master-addr {} listens on every interface: this run's store and event server can be "
                     "reached at {}, and the run's token is the only thing that keeps others out (give one "
                     "interface's address, or 127.0.0.1 when every rank is on this machine)",
                     master_addr, fmt::join(reach, ", "));
}

}  // namespace ringlab
