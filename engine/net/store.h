#pragma once
// A small TCP key-value store for rendezvous, like torchrun's TCPStore. The controller hosts it;
// workers use it to find each other (gloo's rendezvous, NCCL's unique id, MPI-less barriers).
// Every connection first presents the run's token; frames have a size limit; every wait has a timeout.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace ringlab {

class StoreServer {
 public:
  // Binds to `host` (127.0.0.1 unless told otherwise) on `port` (0 = any free port).
  StoreServer(const std::string& host, uint16_t port, std::string token);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;
  uint16_t port() const;
  void stop();  // ends every connection and joins every thread; also done by the destructor
  // Connections the server closed because of a bad token, a malformed or oversized frame, or a
  // lost peer, one line each (the most recent ones), for the controller to print.
  std::vector<std::string> errors() const;
  // The first limit (descriptors, threads) the server hit; "" while none (see TcpServer).
  std::string limit_failure() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One connection to the store. Safe to share between threads (requests take turns); a request
// that fails on the connection itself leaves the client unusable (later requests throw Error).
// Something took the connection but did not answer the store's hello in time: another program
// on that port, or a store whose process is suspended.
class StoreHelloUnanswered : public TimeoutError {
 public:
  using TimeoutError::TimeoutError;
};

class StoreClient {
 public:
  // Connects (retrying until `timeout` while the server is not listening yet) and presents the
  // token: Error "store at host:port refused the token" when it is wrong. `patience` is how
  // long the client waits for the server's answer beyond the wait it asked for (a Get's timeout;
  // none for a Set): a server whose process is suspended does not answer, but its connection
  // stays open, and a worker gives the controller that hosts its store much longer than a peer.
  // A connection that closes fails the request at once, however patient the client.
  StoreClient(const std::string& host, uint16_t port, std::string token,
              std::chrono::milliseconds timeout,
              std::chrono::milliseconds patience = std::chrono::milliseconds(2'000));
  ~StoreClient();
  StoreClient(const StoreClient&) = delete;
  StoreClient& operator=(const StoreClient&) = delete;

  void set(const std::string& key, const std::vector<uint8_t>& value);
  // Waits until the key exists (or the timeout passes: TimeoutError naming the key).
  std::vector<uint8_t> get(const std::string& key);
  // Atomically adds `delta` to the integer stored at key (0 if absent) and returns the new value.
  int64_t add(const std::string& key, int64_t delta);
  // Waits until all keys exist.
  void wait(const std::vector<std::string>& keys);
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  bool check(const std::vector<std::string>& keys);
  std::chrono::milliseconds timeout() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringlab
