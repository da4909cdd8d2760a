// One parser for "host:port" (flags and environment alike) and one source of run tokens.
#include <doctest/doctest.h>

#include <set>

#include "engine/core/error.h"
#include "engine/net/endpoint.h"

using namespace ringlab;

TEST_CASE("host:port: IPv4, names, and IPv6 in brackets") {
  net::Endpoint a = net::parse_endpoint("127.0.0.1:29500", "--x");
  CHECK(a.host == "127.0.0.1");
  CHECK(a.port == 29500);
  a = net::parse_endpoint("node-7.cluster:1", "--x");
  CHECK(a.host == "node-7.cluster");
  CHECK(a.port == 1);
  a = net::parse_endpoint("[::1]:65535", "--x");
  CHECK(a.host == "::1");
  CHECK(a.port == 65535);
  a = net::parse_endpoint("[fe80::1%veth0]:80", "--x");
  CHECK(a.host == "fe80::1%veth0");
}

TEST_CASE("host:port: what is wrong is named, with the flag it came from") {
  const auto error_of = [](const std::string& text) {
    try {
      net::parse_endpoint(text, "--worker-of");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK(error_of("localhost") == "--worker-of: expected host:port, e.g. 127.0.0.1:29600 or [::1]:29600");
  CHECK(error_of(":29500").find("expected host:port") != std::string::npos);
  CHECK(error_of("::1:29500").find("IPv6 host goes in brackets") != std::string::npos);
  CHECK(error_of("[::1:29500").find("IPv6 host goes in brackets") != std::string::npos);
  CHECK(error_of("[]:29500") == "--worker-of: the host is empty");
  CHECK(error_of("h:0") == "--worker-of: the port must be a number in 1..65535");
  CHECK(error_of("h:65536").find("1..65535") != std::string::npos);
  CHECK(error_of("h:80x").find("1..65535") != std::string::npos);
  CHECK(error_of("h:").find("1..65535") != std::string::npos);
}

TEST_CASE("run tokens: hex of the asked length, different every time") {
  const std::string t = net::random_token();
  CHECK(t.size() == 32);
  CHECK(t.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(net::random_token(6).size() == 12);
  std::set<std::string> seen;
  for (int i = 0; i < 64; ++i) seen.insert(net::random_token());
  CHECK(seen.size() == 64);
}
