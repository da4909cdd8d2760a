#include "engine/dist/local_process_group.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/core/error.h"

namespace ringlab {
namespace {

// Tags below zero are the group's own (broadcast, native all-reduce); callers use tags >= 0.
constexpr int kBroadcastTag = -1;
constexpr int kReduceTag = -2;

}  // namespace

// A send or receive posted on the local world. Until wait() returns, the caller's buffer is in use.
class LocalRequest : public Request {
 public:
  LocalRequest(LocalWorld& world, int rank, int src, int dst, int tag, bool is_send)
      : world_(world), rank_(rank), src_(src), dst_(dst), tag_(tag), is_send_(is_send) {}
  ~LocalRequest() override {
    // An abandoned request (its wait timed out, or was never called) must leave the mailbox, or
    // a later partner would copy into or out of a buffer that no longer exists.
    world_.cancel(&transfer, src_, dst_, tag_);
  }

  void wait(std::chrono::milliseconds timeout) override {
    const bool done = world_.wait_done(&transfer, timeout);
    const ErrorContext ctx{rank_, is_send_ ? "send" : "recv", -1};
    const std::string what = (is_send_ ? "send to rank " + std::to_string(dst_)
                                       : "receive from rank " + std::to_string(src_)) +
                             " (tag " + std::to_string(tag_) + ")";
    if (!done)
      throw TimeoutError(ctx, what + " timed out after " + std::to_string(timeout.count()) + " ms");
    if (!transfer.error.empty()) throw Error(ctx, what + ": " + transfer.error);
  }

  LocalWorld::Transfer transfer;

 private:
  LocalWorld& world_;
  int rank_, src_, dst_, tag_;
  bool is_send_;
};

// ---------------------------------------------------------------------------------------------
// LocalWorld: the mailboxes

LocalWorld::LocalWorld(int size, std::chrono::milliseconds timeout) {
  if (size < 1) throw InputError("local world: size must be at least 1, got " + std::to_string(size));
  for (int r = 0; r < size; ++r)
    groups_.push_back(std::make_unique<LocalProcessGroup>(*this, r, timeout));
}

LocalWorld::~LocalWorld() = default;

LocalProcessGroup& LocalWorld::group(int rank) {
  if (rank < 0 || rank >= size())
    throw InputError("local world: no rank " + std::to_string(rank) + " in a world of " +
                     std::to_string(size()));
  return *groups_[static_cast<size_t>(rank)];
}

// The second of a matching pair to arrive does the copy, outside the lock so that different
// pairs copy in parallel; both sides are marked Copying first so neither can be cancelled
// while their buffers are in use.
void LocalWorld::complete_pair(Transfer* send, Transfer* recv) {
  if (send->count == recv->count) {
    if (send->count > 0) std::memcpy(recv->recv_data, send->send_data, send->count * sizeof(float));
  } else {
    const std::string msg = "size mismatch: " + std::to_string(send->count) + " floats sent, " +
                            std::to_string(recv->count) + " expected";
    send->error = msg;
    recv->error = msg;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  send->state = Transfer::State::Done;
  recv->state = Transfer::State::Done;
  send->changed.notify_all();
  recv->changed.notify_all();
}

void LocalWorld::post_send(Transfer* t, int src, int dst, int tag) {
  Transfer* partner = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Mailbox& box = mailboxes_[{src, dst, tag}];
    if (box.recvs.empty()) {
      t->state = Transfer::State::Queued;
      box.sends.push_back(t);
      return;
    }
    partner = box.recvs.front();
    box.recvs.pop_front();
    partner->state = t->state = Transfer::State::Copying;
  }
  complete_pair(t, partner);
}

void LocalWorld::post_recv(Transfer* t, int src, int dst, int tag) {
  Transfer* partner = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Mailbox& box = mailboxes_[{src, dst, tag}];
    if (box.sends.empty()) {
      t->state = Transfer::State::Queued;
      box.recvs.push_back(t);
      return;
    }
    partner = box.sends.front();
    box.sends.pop_front();
    partner->state = t->state = Transfer::State::Copying;
  }
  complete_pair(partner, t);
}

bool LocalWorld::wait_done(Transfer* t, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return t->changed.wait_for(lock, timeout, [t] { return t->state == Transfer::State::Done; });
}

void LocalWorld::cancel(Transfer* t, int src, int dst, int tag) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (t->state == Transfer::State::Queued) {
    auto it = mailboxes_.find({src, dst, tag});
    if (it != mailboxes_.end()) {
      auto drop = [t](std::deque<Transfer*>& q) { q.erase(std::remove(q.begin(), q.end(), t), q.end()); };
      drop(it->second.sends);
      drop(it->second.recvs);
      if (it->second.sends.empty() && it->second.recvs.empty()) mailboxes_.erase(it);
    }
    t->state = Transfer::State::Done;
    return;
  }
  // Matched and copying right now: the copy is short and touches our buffer, so let it finish.
  t->changed.wait(lock, [t] { return t->state != Transfer::State::Copying; });
}

bool LocalWorld::barrier(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t generation = barrier_generation_;
  if (++barrier_arrived_ == size()) {
    barrier_arrived_ = 0;
    ++barrier_generation_;
    barrier_cv_.notify_all();
    return true;
  }
  if (barrier_cv_.wait_for(lock, timeout, [&] { return barrier_generation_ != generation; })) return true;
  --barrier_arrived_;  // leave, so a later barrier is not miscounted
  return false;
}

// ---------------------------------------------------------------------------------------------
// LocalProcessGroup

LocalProcessGroup::LocalProcessGroup(LocalWorld& world, int rank, std::chrono::milliseconds timeout)
    : world_(world), rank_(rank) {
  timeout_ = timeout;
}

void LocalProcessGroup::check_peer(int peer, const char* what) const {
  if (peer < 0 || peer >= size() || peer == rank_)
    throw Error({rank_, what, -1}, "invalid peer rank " + std::to_string(peer) + " in a world of " +
                                       std::to_string(size()));
}

std::unique_ptr<Request> LocalProcessGroup::isend(std::span<const float> data, int dst, int tag) {
  check_peer(dst, "send");
  auto req = std::make_unique<LocalRequest>(world_, rank_, rank_, dst, tag, true);
  req->transfer.send_data = data.data();
  req->transfer.count = data.size();
  world_.post_send(&req->transfer, rank_, dst, tag);
  return req;
}

std::unique_ptr<Request> LocalProcessGroup::irecv(std::span<float> data, int src, int tag) {
  check_peer(src, "recv");
  auto req = std::make_unique<LocalRequest>(world_, rank_, src, rank_, tag, false);
  req->transfer.recv_data = data.data();
  req->transfer.count = data.size();
  world_.post_recv(&req->transfer, src, rank_, tag);
  return req;
}

void LocalProcessGroup::broadcast(std::span<float> data, int root) {
  if (root < 0 || root >= size())
    throw Error({rank_, "broadcast", -1}, "invalid root rank " + std::to_string(root));
  if (rank_ != root) {
    irecv(data, root, kBroadcastTag)->wait(timeout_);
    return;
  }
  std::vector<std::unique_ptr<Request>> sends;
  for (int peer = 0; peer < size(); ++peer)
    if (peer != root) sends.push_back(isend(data, peer, kBroadcastTag));
  for (auto& s : sends) s->wait(timeout_);
}

void LocalProcessGroup::barrier() {
  if (!world_.barrier(timeout_))
    throw TimeoutError({rank_, "barrier", -1},
                       "not every rank arrived within " + std::to_string(timeout_.count()) + " ms");
}

void LocalProcessGroup::allreduce_native(std::span<float> data) {
  if (size() == 1) return;
  if (rank_ != 0) {
    send(data, 0, kReduceTag);
  } else {
    // Sum in rank order so every run gives the same bits.
    std::vector<float> incoming(data.size());
    for (int peer = 1; peer < size(); ++peer) {
      recv(incoming, peer, kReduceTag);
      reduce_add(data, incoming);
    }
  }
  broadcast(data, 0);
}

}  // namespace ringlab
