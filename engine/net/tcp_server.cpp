#include "engine/net/tcp_server.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <condition_variable>
#include <list>
#include <mutex>
#include <thread>

#include <fmt/core.h>

#include "engine/core/error.h"
#include "engine/core/thread_name.h"
#include "engine/core/limits.h"

namespace ringlab::net {

struct TcpServer::Impl {
  struct Connection {
    Socket socket;
    std::string peer;
    std::thread thread;
    bool finished = false;  // guarded by Impl::mutex
  };

  std::string host;
  Socket listener;
  uint16_t port = 0;
  Handler handler;
  ErrorHandler on_error;
  size_t max_connections;
  int wake_read = -1;  // a pipe that wakes the accept loop's poll() on stop()
  int wake_write = -1;

  mutable std::mutex mutex;
  mutable std::condition_variable closed;
  std::list<std::unique_ptr<Connection>> connections;
  size_t open = 0;
  std::atomic<bool> stopping{false};
  std::mutex stop_mutex;
  std::thread accept_thread;
  std::string limit_failure;  // guarded by mutex: the first limit the server hit

  void report(const std::string& message) {
    if (!on_error) return;
    try {
      on_error(message);
    } catch (...) {
    }
  }

  void accept_loop() {
    name_this_thread("accept");
    while (!stopping.load()) {
      pollfd fds[2] = {{listener.fd(), POLLIN, 0}, {wake_read, POLLIN, 0}};
      // The timeout only paces the reaping of finished connection threads.
      const int rc = ::poll(fds, 2, 1000);
      reap_finished();
      if (stopping.load()) break;
      if (rc < 0 && errno != EINTR) {
        report(fmt::format("server on {}: poll failed: {}", host_port(host, port), std::strerror(errno)));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (rc > 0 && (fds[0].revents & POLLIN)) accept_pending();
    }
  }

  void accept_pending() {
    while (!stopping.load()) {
      Socket socket;
      try {
        socket = accept_tcp(listener);
      } catch (const LimitError& e) {
        // Out of descriptors: the run cannot go on, and its owner is told (limit_failure()).
        note_limit(e.what());
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return;
      } catch (const std::exception& e) {
        // Out of memory, or something passing: back off instead of spinning on a ready listener.
        report(e.what());
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return;
      }
      if (!socket.valid()) return;
      set_nodelay(socket);
      start_connection(std::move(socket));
    }
  }

  void start_connection(Socket socket) {
    std::string peer = peer_name(socket);
    std::unique_lock lock(mutex);
    if (open >= max_connections) {
      report(fmt::format("refused {}: already {} connections open", peer, open));
      return;
    }
    auto connection = std::make_unique<Connection>();
    connection->socket = std::move(socket);
    connection->peer = std::move(peer);
    Connection* c = connection.get();
    try {
      // The thread waits for this lock before it ends, so it cannot finish before it is listed.
      c->thread = start_thread("the connection from " + c->peer, [this, c] { serve(*c); });
    } catch (const LimitError& e) {
      // Refused: the connection closes unanswered (its client fails at once, not at a timeout),
      // and the server's owner learns which limit was hit.
      lock.unlock();
      note_limit(fmt::format("{}; the connection was refused", e.what()));
      return;
    }
    connections.push_back(std::move(connection));
    ++open;
  }

  void note_limit(const std::string& message) {
    {
      std::lock_guard lock(mutex);
      if (limit_failure.empty()) limit_failure = message;
    }
    report(message);
  }

  void serve(Connection& c) {
    try {
      handler(c.socket, c.peer);
    } catch (const std::exception& e) {
      report(fmt::format("connection from {}: {}", c.peer, e.what()));
    } catch (...) {
      report(fmt::format("connection from {}: unknown error", c.peer));
    }
    // Closed under the lock so stop() never shuts down a descriptor number already reused.
    std::lock_guard lock(mutex);
    c.socket.close();
    c.finished = true;
    --open;
    closed.notify_all();
  }

  void reap_finished() {
    std::list<std::unique_ptr<Connection>> done;
    {
      std::lock_guard lock(mutex);
      for (auto it = connections.begin(); it != connections.end();) {
        auto current = it++;
        if ((*current)->finished) done.splice(done.end(), connections, current);
      }
    }
    for (auto& c : done) c->thread.join();
  }

  void stop() {
    std::lock_guard stop_lock(stop_mutex);
    if (stopping.exchange(true)) return;
    const char byte = 1;
    [[maybe_unused]] ssize_t ignored = ::write(wake_write, &byte, 1);
    if (accept_thread.joinable()) accept_thread.join();
    std::list<std::unique_ptr<Connection>> all;
    {
      std::lock_guard lock(mutex);
      for (auto& c : connections)
        if (!c->finished) c->socket.shutdown();
      all.swap(connections);
    }
    for (auto& c : all) c->thread.join();
    listener.close();
  }
};

TcpServer::TcpServer(const std::string& host, uint16_t port, Handler handler, ErrorHandler on_error,
                     size_t max_connections)
    : impl_(std::make_unique<Impl>()) {
  impl_->host = host;
  impl_->handler = std::move(handler);
  impl_->on_error = std::move(on_error);
  impl_->max_connections = max_connections;
  impl_->listener = listen_tcp(host, port);
  impl_->port = local_port(impl_->listener);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
    throw Error(fmt::format("server on {}: cannot create its wake-up pipe", host_port(host, port)));
  impl_->wake_read = fds[0];
  impl_->wake_write = fds[1];
  impl_->accept_thread = start_thread("the accept loop of the server on " + host_port(host, impl_->port),
                                      [impl = impl_.get()] { impl->accept_loop(); });
}

TcpServer::~TcpServer() {
  stop();
  ::close(impl_->wake_read);
  ::close(impl_->wake_write);
}

uint16_t TcpServer::port() const { return impl_->port; }
const std::string& TcpServer::host() const { return impl_->host; }
void TcpServer::stop() { impl_->stop(); }

std::string TcpServer::limit_failure() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->limit_failure;
}

size_t TcpServer::open_connections() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->open;
}

bool TcpServer::wait_no_connections(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(impl_->mutex);
  return impl_->closed.wait_for(lock, timeout, [&] { return impl_->open == 0; });
}

}  // namespace ringlab::net
