#include "engine/control/node_rendezvous.h"

#include <unistd.h>

#include <algorithm>
#include <thread>

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/clock.h"
#include "engine/core/error.h"
#include "engine/net/store.h"

namespace ringlab {
namespace {

constexpr const char* kRun = "ringlab/nodes/run";
constexpr const char* kAbort = "ringlab/nodes/abort";
constexpr const char* kResult = "ringlab/nodes/result";
constexpr const char* kStarted = "ringlab/nodes/started";
constexpr auto kPollInterval = std::chrono::milliseconds(50);

std::string node_key(const char* what, int node) { return fmt::format("ringlab/nodes/{}/{}", what, node); }

std::vector<uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }
std::string text_of(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

// A key that may not be there (yet): its value, or nothing, without waiting.
std::optional<std::string> peek(StoreClient& store, const std::string& key) {
  if (!store.check({key})) return std::nullopt;
  return text_of(store.get(key));
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "?";
  return name;
}

nlohmann::json exit_json(const RankExit& e) {
  return {{"rank", e.rank},     {"pid", e.pid},           {"exited", e.exited},   {"exit_code", e.exit_code},
          {"signal", e.signal}, {"terminated", e.terminated}, {"timed_out", e.timed_out},
          {"node", e.node},     {"seen_unix_ns", e.seen_unix_ns}};
}

RankExit exit_from_json(const nlohmann::json& j) {
  RankExit e;
  e.rank = j.at("rank").get<int>();
  e.pid = j.at("pid").get<pid_t>();
  e.exited = j.at("exited").get<bool>();
  e.exit_code = j.at("exit_code").get<int>();
  e.signal = j.at("signal").get<int>();
  e.terminated = j.at("terminated").get<bool>();
  e.timed_out = j.at("timed_out").get<bool>();
  e.node = j.at("node").get<int>();
  e.seen_unix_ns = j.at("seen_unix_ns").get<int64_t>();
  return e;
}

// Why this node cannot take part in node 0's run, or "" when it can.
std::string disagreement(const RunInvitation& run, const RunInvitation& mine, bool run_id_given) {
  if (run_id_given && mine.run_id != run.run_id)
    return fmt::format("this node was given --run-id {} but node 0's run is {}", mine.run_id, run.run_id);
  if (mine.nnodes != run.nnodes)
    return fmt::format("this node was given --nnodes {} but node 0 runs --nnodes {}", mine.nnodes, run.nnodes);
  if (mine.nproc_per_node != run.nproc_per_node)
    return fmt::format("this node would start {} ranks (its --nproc-per-node, or -n over --nnodes) but node 0 runs {} "
                       "per node",
                       mine.nproc_per_node, run.nproc_per_node);
  return "";
}

}  // namespace

void publish_run(StoreClient& store, const RunInvitation& run) {
  const nlohmann::json j = {{"run_id", run.run_id}, {"nnodes", run.nnodes}, {"nproc_per_node", run.nproc_per_node},
                            {"event_port", run.event_port}, {"job", run.job}};
  store.set(kRun, bytes_of(j.dump()));
}

RunInvitation join_run(StoreClient& store, int node_rank, const RunInvitation& mine, bool run_id_given) {
  RunInvitation run;
  try {
    const nlohmann::json j = nlohmann::json::parse(text_of(store.get(kRun)));
    run.run_id = j.at("run_id").get<std::string>();
    run.nnodes = j.at("nnodes").get<int>();
    run.nproc_per_node = j.at("nproc_per_node").get<int>();
    run.event_port = j.at("event_port").get<uint16_t>();
    run.job = j.at("job").get<JobConfig>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("node {}: node 0's description of the run cannot be read ({})", node_rank, json_error_words(e)));
  }
  std::string why = disagreement(run, mine, run_id_given);
  if (why.empty() && node_rank >= run.nnodes)
    why = fmt::format("--node-rank {} is not one of node 0's {} nodes (0 to {})", node_rank, run.nnodes, run.nnodes - 1);
  if (why.empty() && store.add(node_key("claim", node_rank), 1) > 1)
    why = fmt::format("another node has already joined as --node-rank {}", node_rank);
  if (!why.empty()) {
    store.set(node_key("refused", node_rank), bytes_of(why));
    throw InputError(fmt::format("node {} cannot join run {}: {}", node_rank, run.run_id, why));
  }
  store.set(node_key("joined", node_rank), bytes_of(fmt::format("{} (pid {})", host_name(), ::getpid())));
  return run;
}

bool wait_for_nodes(StoreClient& store, int nnodes, std::chrono::milliseconds timeout, const std::string& store_at,
                    const std::function<std::vector<std::string>()>& refused_connections,
                    const std::function<bool()>& stop) {
  const int64_t deadline = now_ns() + std::chrono::nanoseconds(timeout).count();
  std::vector<std::string> refused_nodes;  // "node 2 refused to join: ..."
  std::vector<int> missing;                // nodes neither joined nor refused
  for (;;) {
    refused_nodes.clear();
    missing.clear();
    for (int node = 1; node < nnodes; ++node) {
      if (store.check({node_key("joined", node)})) continue;
      if (auto why = peek(store, node_key("refused", node)))
        refused_nodes.push_back(fmt::format("node {} refused to join: {}", node, *why));
      else
        missing.push_back(node);
    }
    if (missing.empty() || now_ns() >= deadline) break;
    if (stop()) return false;
    std::this_thread::sleep_for(kPollInterval);
  }
  if (refused_nodes.empty() && missing.empty()) return true;
  std::vector<std::string> refused = refused_connections();
  for (std::string& line : refused)
    if (line.rfind("store: ", 0) == 0) line.erase(0, 7);
  // A node that reached the store with another token did reach it: the address is not the question.
  const std::string why_missing =
      refused.empty() ? fmt::format("was it started with this store's address, {}, and can it reach it?", store_at)
                      : "a node reached the store with a token not this run's, refused as below";
  std::vector<std::string> problems = refused_nodes;
  for (const int node : missing)
    problems.push_back(fmt::format("node {} never joined within {} s ({})", node, timeout.count() / 1000, why_missing));
  std::string message = fmt::format("the run cannot start: {}", fmt::join(problems, "; "));
  if (!refused.empty()) message += fmt::format("; node 0's store refused: {}", fmt::join(refused, "; "));
  throw InputError(message);
}

void announce_start(StoreClient& store) { store.set(kStarted, {1}); }

bool wait_for_start(StoreClient& store, int node_rank, std::chrono::milliseconds timeout,
                    const std::function<bool()>& stop) {
  const int64_t deadline = now_ns() + std::chrono::nanoseconds(timeout).count();
  for (;;) {
    if (store.check({kStarted})) return true;
    if (std::optional<std::string> verdict = peek(store, kResult)) {
      store.set(node_key("done", node_rank), {1});  // read: node 0 need not wait for this node
      throw InputError(fmt::format("node 0 says: {}", *verdict));
    }
    if (stop()) return false;
    if (now_ns() >= deadline)
      throw Error(fmt::format("node {} joined, but node 0 did not start the run within {} s", node_rank,
                              timeout.count() / 1000));
    beat(store, node_rank);
    std::this_thread::sleep_for(kPollInterval);
  }
}

void publish_abort(StoreClient& store, const AbortNote& note) {
  if (store.add("ringlab/nodes/abort_claims", 1) != 1) return;
  const nlohmann::json j = {{"node", note.node}, {"cause", static_cast<int>(note.cause)}, {"why", note.why}};
  store.set(kAbort, bytes_of(j.dump()));
}

std::optional<AbortNote> read_abort(StoreClient& store) {
  const std::optional<std::string> text = peek(store, kAbort);
  if (!text) return std::nullopt;
  AbortNote note;
  try {
    const nlohmann::json j = nlohmann::json::parse(*text);
    note.node = j.at("node").get<int>();
    note.cause = static_cast<StopCause>(j.at("cause").get<int>());
    note.why = j.at("why").get<std::string>();
  } catch (const nlohmann::json::exception&) {
    note.why = *text;
  }
  return note;
}

void beat(StoreClient& store, int node_rank) { store.add(node_key("beat", node_rank), 1); }

NodeWatch::NodeWatch(int nnodes)
    : beats_(static_cast<size_t>(nnodes), -1), changed_ns_(static_cast<size_t>(nnodes), now_ns()) {}

void publish_suspended(StoreClient& store, int node_rank, bool suspended) {
  store.set(node_key("suspended", node_rank), {static_cast<uint8_t>(suspended ? 1 : 0)});
}

std::vector<int> NodeWatch::silent(StoreClient& store, std::chrono::milliseconds silence) {
  std::vector<int> quiet;
  suspended_.clear();
  const int64_t now = now_ns();
  for (size_t node = 1; node < beats_.size(); ++node) {
    const int64_t count = store.add(node_key("beat", static_cast<int>(node)), 0);
    const std::optional<std::string> paused = peek(store, node_key("suspended", static_cast<int>(node)));
    if (paused && !paused->empty() && (*paused)[0] == 1) {  // its silence is Ctrl-Z's, said before it came
      suspended_.push_back(static_cast<int>(node));
      changed_ns_[node] = now;
    } else if (count != beats_[node]) {
      beats_[node] = count;
      changed_ns_[node] = now;
    } else if (now - changed_ns_[node] >= std::chrono::nanoseconds(silence).count()) {
      quiet.push_back(static_cast<int>(node));
    }
  }
  return quiet;
}

bool NodeWatch::is_suspended(int node) const {
  return std::find(suspended_.begin(), suspended_.end(), node) != suspended_.end();
}

void publish_exits(StoreClient& store, int node_rank, const std::vector<RankExit>& exits) {
  nlohmann::json list = nlohmann::json::array();
  for (const RankExit& e : exits) list.push_back(exit_json(e));
  store.set(node_key("exits", node_rank), bytes_of(list.dump()));
}

std::vector<RankExit> collect_exits(StoreClient& store, int nnodes, std::chrono::milliseconds timeout,
                                    std::chrono::milliseconds suspended_timeout, NodeWatch& watch,
                                    std::vector<int>& lost) {
  const int64_t start = now_ns();
  const int64_t deadline = start + std::chrono::nanoseconds(timeout).count();
  const int64_t suspended_deadline = start + std::chrono::nanoseconds(suspended_timeout).count();
  std::vector<RankExit> all;
  for (int node = 1; node < nnodes; ++node) {
    std::optional<std::string> text;
    auto gone = [&] {
      const std::vector<int> quiet = watch.silent(store, kNodeSilence);
      return std::find(quiet.begin(), quiet.end(), node) != quiet.end();
    };
    auto waited_enough = [&] { return now_ns() >= (watch.is_suspended(node) ? suspended_deadline : deadline); };
    while (!(text = peek(store, node_key("exits", node))) && !gone() && !waited_enough())
      std::this_thread::sleep_for(kPollInterval);
    if (!text) {  // that node's controller is gone: its ranks' events still tell what they did
      lost.push_back(node);
      continue;
    }
    try {
      for (const nlohmann::json& j : nlohmann::json::parse(*text)) all.push_back(exit_from_json(j));
    } catch (const nlohmann::json::exception&) {
    }
  }
  return all;
}

std::vector<RankExit> merge_exits(std::vector<RankExit> exits) {
  auto caused_it = [](const RankExit& e) { return !e.ok() && !e.terminated; };
  auto before = [&](const RankExit& a, const RankExit& b) {
    if (caused_it(a) != caused_it(b)) return caused_it(a);
    if (!caused_it(a)) return a.rank < b.rank;
    if ((a.signal != 0) != (b.signal != 0)) return a.signal != 0;
    return a.seen_unix_ns < b.seen_unix_ns;
  };
  std::stable_sort(exits.begin(), exits.end(), before);
  // The cause first, then every other process in rank order, as one node's launcher reports them.
  if (exits.size() > 1) std::stable_sort(exits.begin() + 1, exits.end(), [](const RankExit& a, const RankExit& b) {
    return a.rank < b.rank;
  });
  return exits;
}

void publish_result(StoreClient& store, const std::string& failure) { store.set(kResult, bytes_of(failure)); }

std::optional<std::string> read_result(StoreClient& store, int node_rank, std::chrono::milliseconds timeout) {
  const int64_t deadline = now_ns() + std::chrono::nanoseconds(timeout).count();
  std::optional<std::string> result;
  while (!(result = peek(store, kResult)) && now_ns() < deadline) {
    beat(store, node_rank);
    std::this_thread::sleep_for(kPollInterval);
  }
  if (result) store.set(node_key("done", node_rank), {1});
  return result;
}

void wait_results_read(StoreClient& store, int nnodes, std::chrono::milliseconds timeout, NodeWatch& watch,
                       const std::vector<int>& lost) {
  const int64_t deadline = now_ns() + std::chrono::nanoseconds(timeout).count();
  for (int node = 1; node < nnodes; ++node) {
    if (std::find(lost.begin(), lost.end(), node) != lost.end()) continue;
    auto gone = [&] {
      const std::vector<int> quiet = watch.silent(store, kNodeSilence);
      return std::find(quiet.begin(), quiet.end(), node) != quiet.end();
    };
    while (!store.check({node_key("done", node)}) && now_ns() < deadline && !gone())
      std::this_thread::sleep_for(kPollInterval);
  }
}

void tell_joined_nodes(StoreClient& store, int nnodes, const std::string& why, std::chrono::milliseconds timeout) {
  publish_result(store, why);
  const int64_t deadline = now_ns() + std::chrono::nanoseconds(timeout).count();
  for (int node = 1; node < nnodes; ++node)
    while (store.check({node_key("joined", node)}) && !store.check({node_key("done", node)}) && now_ns() < deadline)
      std::this_thread::sleep_for(kPollInterval);
}

}  // namespace ringlab
