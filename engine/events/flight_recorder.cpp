#include "engine/events/flight_recorder.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/clock.h"
#include "engine/events/ring_step_words.h"
#include "engine/events/training_step_words.h"

namespace ringlab {

const char* to_string(CollectiveState s) {
  switch (s) {
    case CollectiveState::Scheduled: return "scheduled";
    case CollectiveState::Started: return "started";
    case CollectiveState::Completed: return "completed";
  }
  return "?";
}

int64_t FlightRecorder::schedule(const std::string& op, int64_t numel, const std::string& backend,
                                 const std::string& algorithm, int64_t step) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (holding_) {
    one_held_ = true;
    held_cv_.notify_all();
    held_cv_.wait(lock, [] { return false; });  // until the process ends
  }
  CollectiveRecord r;
  r.seq = next_seq_++;
  r.op = op;
  r.numel = numel;
  r.backend = backend;
  r.algorithm = algorithm;
  r.step = step;
  r.t_scheduled_ns = now_ns();
  if (ring_.size() < capacity_) {
    ring_.push_back(std::move(r));
  } else {
    ring_[next_] = std::move(r);
    next_ = (next_ + 1) % capacity_;
  }
  return next_seq_ - 1;
}

// Record `seq` went into slot seq % capacity (numbers are handed out in order and the ring
// fills, then wraps, in that order), unless a newer one has taken the slot since.
CollectiveRecord* FlightRecorder::find(int64_t seq) {
  if (seq < 0 || capacity_ == 0) return nullptr;
  const size_t slot = static_cast<size_t>(seq) % capacity_;
  if (slot >= ring_.size() || ring_[slot].seq != seq) return nullptr;
  return &ring_[slot];
}

void FlightRecorder::start(int64_t seq) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto* r = find(seq)) {
    r->state = CollectiveState::Started;
    r->t_started_ns = now_ns();
  }
}

void FlightRecorder::ring_step(int64_t seq, int step) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto* r = find(seq)) r->ring_step = step;
}

void FlightRecorder::complete(int64_t seq) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto* r = find(seq)) {
    r->state = CollectiveState::Completed;
    r->t_completed_ns = now_ns();
  }
}

void FlightRecorder::hold_new_collectives(std::chrono::milliseconds settle) {
  std::unique_lock<std::mutex> lock(mutex_);
  holding_ = true;
  held_cv_.wait_for(lock, settle, [this] { return one_held_; });
}

std::vector<CollectiveRecord> FlightRecorder::records() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<CollectiveRecord> out(ring_.begin() + static_cast<std::ptrdiff_t>(next_), ring_.end());
  out.insert(out.end(), ring_.begin(), ring_.begin() + static_cast<std::ptrdiff_t>(next_));
  return out;
}

nlohmann::json FlightRecorder::to_json(int rank) const {
  nlohmann::json list = nlohmann::json::array();
  for (const CollectiveRecord& r : records())
    list.push_back({{"seq", r.seq}, {"op", r.op}, {"numel", r.numel}, {"backend", r.backend},
                    {"algorithm", r.algorithm}, {"state", to_string(r.state)}, {"step", r.step},
                    {"ring_step", r.ring_step}, {"t_scheduled_ns", r.t_scheduled_ns},
                    {"t_started_ns", r.t_started_ns}, {"t_completed_ns", r.t_completed_ns}});
  return {{"rank", rank}, {"entries", list}};
}

namespace {

struct RankView {
  bool reported = false;
  nlohmann::json last;          // newest entry, or null
  int64_t last_completed = -1;
  std::map<int64_t, nlohmann::json> by_seq;
};

std::map<int, RankView> line_up(const std::vector<nlohmann::json>& reported, int world) {
  std::map<int, RankView> view;
  for (int r = 0; r < world; ++r) view[r];
  for (const nlohmann::json& rec : reported) {
    const int rank = rec.value("rank", -1);
    if (rank < 0 || rank >= world) continue;
    RankView& v = view[rank];
    v.reported = true;
    for (const nlohmann::json& e : rec.at("entries")) {
      const int64_t seq = e.at("seq").get<int64_t>();
      v.by_seq[seq] = e;
      v.last = e;
      if (e.at("state") == "completed") v.last_completed = std::max(v.last_completed, seq);
    }
  }
  return view;
}

// The first collective some rank is stuck in: the lowest sequence number that a reporting
// rank scheduled or started but did not complete, with its operation (ranks number their own
// collectives, so the same number on another rank may be another operation).
std::pair<int64_t, std::string> stuck_collective(const std::map<int, RankView>& view) {
  int64_t stuck = -1;
  std::map<std::string, int> ops;  // op at that seq -> how many ranks wait in it
  for (const auto& [rank, v] : view)
    for (const auto& [seq, e] : v.by_seq)
      if (e.at("state") != "completed" && (stuck < 0 || seq < stuck)) stuck = seq;
  if (stuck < 0) return {-1, ""};
  for (const auto& [rank, v] : view) {
    auto it = v.by_seq.find(stuck);
    if (it != v.by_seq.end() && it->second.at("state") != "completed") ++ops[it->second.at("op").get<std::string>()];
  }
  std::string op;
  int most = 0;
  for (const auto& [name, count] : ops)
    if (count > most) most = count, op = name;
  return {stuck, op};
}

// Ranks number their own collectives: the same number at different training steps is not the same
// all-reduce. A rank that skipped one, or called one more, is in "collective 7" with the others and
// still waits for ever: the steps say so where the sequence numbers cannot. "" when they agree.
std::string steps_apart(const std::map<int, RankView>& view, int64_t stuck, const std::vector<int>& waiting) {
  std::map<int64_t, std::vector<int>> ranks_at;  // training step -> the ranks waiting in `stuck` there
  for (int r : waiting) ranks_at[view.at(r).by_seq.at(stuck).at("step").get<int64_t>()].push_back(r);
  if (ranks_at.size() < 2) return "";
  std::vector<std::string> groups;
  for (const auto& [step, ranks] : ranks_at)
    groups.push_back(fmt::format("{} {} {}", ranks.size() == 1 ? "rank" : "ranks", fmt::join(ranks, ", "), at_training_step(step)));
  return fmt::format("  but not at one training step: {}; their collective {} is not the same all-reduce (a rank "
                     "skipped one, or called one more)\n", fmt::join(groups, "; "), stuck);
}

}  // namespace

nlohmann::json flight_report_json(const std::vector<nlohmann::json>& reported, int world) {
  const auto view = line_up(reported, world);
  const auto [stuck, op] = stuck_collective(view);
  nlohmann::json out = {{"world_size", world}, {"stuck_seq", stuck}, {"stuck_op", op},
                        {"ranks", nlohmann::json::array()}};
  std::vector<int> missing, waiting, silent;
  for (const auto& [rank, v] : view) {
    out["ranks"].push_back({{"rank", rank}, {"reported", v.reported}, {"last", v.last},
                            {"last_completed_seq", v.last_completed}});
    if (!v.reported) silent.push_back(rank);
    if (stuck < 0) continue;
    auto it = v.by_seq.find(stuck);
    const bool in_it = it != v.by_seq.end() && it->second.at("state") != "completed" && it->second.at("op") == op;
    if (in_it) waiting.push_back(rank);
    else missing.push_back(rank);
  }
  out["waiting_ranks"] = waiting;
  out["missing_ranks"] = missing;
  out["silent_ranks"] = silent;
  out["records"] = reported;
  return out;
}

std::string format_flight_report(const std::vector<nlohmann::json>& reported, int world) {
  const auto view = line_up(reported, world);
  const nlohmann::json j = flight_report_json(reported, world);
  std::string out = std::string(kFlightReportTitle) + "\n";
  out += fmt::format("  {:<5} {:>6} {:<10} {:>8} {:<10} {:>6}  {}\n", "rank", "seq", "op", "numel", "state", "step",
                     "ring step");
  for (const auto& [rank, v] : view) {
    if (!v.reported || v.last.is_null()) {
      out += fmt::format("  {:<5} {}\n", rank, v.reported ? "no collective yet" : "no record (its process did not answer: gone, or stopped)");
      continue;
    }
    const nlohmann::json& e = v.last;
    out += fmt::format("  {:<5} {:>6} {:<10} {:>8} {:<10} {:>6}  {}\n", rank, e.at("seq").get<int64_t>(),
                       e.at("op").get<std::string>(), e.at("numel").get<int64_t>(), e.at("state").get<std::string>(),
                       training_step_cell(e.at("step").get<int64_t>()), ring_step_words(e.at("ring_step").get<int>(), world));
  }
  const int64_t stuck = j.at("stuck_seq").get<int64_t>();
  if (stuck >= 0) {
    const auto waiting = j.at("waiting_ranks").get<std::vector<int>>();
    const auto missing = j.at("missing_ranks").get<std::vector<int>>();
    out += fmt::format("  collective {} ({}) has ranks {{{}}} waiting in it; missing ranks: {{{}}}\n", stuck,
                       j.at("stuck_op").get<std::string>(), fmt::join(waiting, ", "), fmt::join(missing, ", "));
    out += steps_apart(view, stuck, waiting);
    for (int r : missing) {
      const RankView& v = view.at(r);
      if (!v.reported || v.last.is_null()) continue;
      out += fmt::format("  rank {} is elsewhere: {} #{} ({}) {}\n", r, v.last.at("op").get<std::string>(),
                         v.last.at("seq").get<int64_t>(), v.last.at("state").get<std::string>(),
                         at_training_step(v.last.at("step").get<int64_t>()));
    }
  }
  return out;
}

}  // namespace ringlab
