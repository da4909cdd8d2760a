#pragma once
// Addresses and tokens, each spelled and checked in one place: "host:port" as every flag and
// environment variable gives it (with IPv6 hosts in brackets, "[::1]:29500"), and the random
// token each run's servers require in a connection's hello.
#include <cstddef>
#include <cstdint>
#include <string>

namespace ringlab::net {

struct Endpoint {
  std::string host;
  uint16_t port = 0;
};

// "127.0.0.1:29500", "node7:29500", "[::1]:29500" (the brackets are dropped from the host).
// Throws InputError naming `what` ("--worker-of", "RINGLAB_EVENT_ADDR=...") and the rule broken.
Endpoint parse_endpoint(const std::string& text, const std::string& what);
// "127.0.0.1", "localhost", "::1" (any case): addresses only this machine reaches.
bool is_loopback(const std::string& host);
// A port in 1..65535; throws InputError naming `what`.
uint16_t parse_port(const std::string& text, const std::string& what);

// `bytes` bytes from the system's random source, as lowercase hex (32 characters by default).
std::string random_token(size_t bytes = 16);

}  // namespace ringlab::net
