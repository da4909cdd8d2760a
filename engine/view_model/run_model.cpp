#include "engine/view_model/run_model.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

namespace ringlab::view_model {
namespace {
constexpr size_t kKeptLines = 32;
}

RunModel::RunModel() = default;

void RunModel::clear() {
  collectives_.clear();
  loss_.clear();
  sampler_.clear();
  timeline_.clear();
  failures_.clear();
  failure_cache_version_ = ~uint64_t{0};
  generations_.clear();
  rank_generation_.clear();
  ranks_.clear();
  carried_step_ = -1;
  carried_epoch_ = -1;
  restart_from_.reset();
  errors_.clear();
  errors_generation_ = 0;
  stopped_at_ns_ = -1;
  logs_.clear();
  run_ended_ = false;
  us_per_step_ = 0.0;
  step_rate_.clear();
  events_seen_ = 0;
  store_cursor_ = 0;
  if (!label_set_) loss_.set_label("");
}

void RunModel::set_label(std::string label) {
  label_set_ = !label.empty();
  loss_.set_label(std::move(label));
}

const Generation* RunModel::current_generation() const {
  return generations_.empty() ? nullptr : &generations_.back();
}

int RunModel::world_size() const {
  const Generation* g = current_generation();
  if (g && g->world_size > 0) return g->world_size;
  return static_cast<int>(ranks_.size());
}

// The current generation's ranks, from where it took over: a rank that was in an older world
// only (the world shrank) holds that world's last step, not this one's.
int64_t RunModel::latest_step() const {
  int64_t step = carried_step_;
  for (const auto& r : ranks_)
    if (in_current_generation(r)) step = std::max(step, r.step);
  return step;
}

int RunModel::latest_epoch() const {
  int epoch = carried_epoch_;
  for (const auto& r : ranks_)
    if (in_current_generation(r)) epoch = std::max(epoch, r.epoch);
  return epoch;
}

int RunModel::followed_epoch(bool live) const {
  const Generation* current = current_generation();
  const std::vector<EpochKey> epochs = sampler_.epochs();
  if (!live || !current || epochs.empty() || epochs.back().generation != current->index) return latest_epoch();
  const int slot = view_model::followed_epoch(sampler_, epochs, world_size(), true);
  return slot < 0 ? latest_epoch() : epochs[slot].epoch;
}

int64_t RunModel::steps_done(bool live) const {
  if (!live) return latest_step() + 1;
  int reporting = 0;
  int64_t slowest = std::numeric_limits<int64_t>::max();
  for (const auto& r : ranks_) {
    if (!in_current_generation(r)) continue;
    ++reporting;
    slowest = std::min(slowest, std::max(carried_step_, r.step));
  }
  // Until every rank of the world has begun, the new ranks have done no step of their own.
  if (reporting < world_size()) return carried_step_ + 1;
  return slowest + 1;
}

bool RunModel::in_current_generation(const RankProgress& r) const {
  return generations_.size() <= 1 || r.generation == generations_.back().index;
}

// Every worker process announces itself with RunBegin, and a rank's events belong to the
// generation of its latest RunBegin (events before any belong to generation 0).
int RunModel::generation_of(const Event& event) {
  if (event.rank < 0 || event.rank >= kMaxWorldSize) return 0;
  if (static_cast<int>(rank_generation_.size()) <= event.rank) rank_generation_.resize(event.rank + 1, 0);
  if (event.kind == EventKind::RunBegin) rank_generation_[event.rank] = generation_begun_by(event);
  return rank_generation_[event.rank];
}

// A RunBegin joins the newest generation, unless its rank has begun in that one already (a
// restart, a change of backend) or it names another world size (the world grew or shrank):
// then it opens the next. Counting each rank's RunBegins instead would put the ranks a growth
// adds, whose first RunBegin this is, into the first generation with the old world.
int RunModel::generation_begun_by(const Event& run_begin) const {
  if (generations_.empty()) return 1;
  const Generation& newest = generations_.back();
  const bool begun_there = rank_generation_[run_begin.rank] == newest.index;
  const bool other_world = run_begin.value > 0 && static_cast<int>(run_begin.value) != newest.world_size;
  return begun_there || other_world ? newest.index + 1 : newest.index;
}

void RunModel::note_run_begin(const Event& event, int generation) {
  if (generations_.empty() || generations_.back().index < generation) {
    if (!generations_.empty()) {
      carried_step_ = restart_from_ ? restart_from_->first : latest_step();
      carried_epoch_ = restart_from_ ? restart_from_->second : latest_epoch();
    }
    restart_from_.reset();
    Generation g;
    g.index = generation;
    g.world_size = static_cast<int>(event.value);
    try {
      if (!event.text.empty()) {
        const nlohmann::json job = nlohmann::json::parse(event.text);
        g.job = job.get<JobConfig>();
        g.epochs_announced = job.contains("epochs");
        g.unreported = unreported_training_fields(job);
        g.has_job = true;
        if (g.world_size <= 0) g.world_size = g.job.world_size;
      }
    } catch (const std::exception& e) {
      keep(logs_, std::string("run_begin: could not read the job: ") + e.what());
    }
    generations_.push_back(std::move(g));
    run_ended_ = false;
    us_per_step_ = 0.0;  // the set before this one's speed says nothing about this one's
    own_pace_ = {};
    step_rate_.clear();
    if (!label_set_ && generations_.size() == 1 && generations_.back().has_job)
      loss_.set_job(generations_.back().job);
  }
}

void RunModel::keep(std::vector<std::string>& list, std::string line) {
  if (list.size() == kKeptLines) list.erase(list.begin());
  list.push_back(std::move(line));
}

void RunModel::consume(const Event& event) {
  ++events_seen_;
  const int generation = generation_of(event);
  if (event.kind == EventKind::RunBegin) note_run_begin(event, generation);

  Generation* g = nullptr;
  for (auto it = generations_.rbegin(); it != generations_.rend(); ++it)
    if (it->index == generation) g = &*it;
  if (g && event.rank == 0 &&
      (event.kind == EventKind::SamplerShard || event.kind == EventKind::EpochEnd ||
       (event.kind == EventKind::StepEnd && event.epoch > 0)))
    g->epochs_seen = true;
  const int gen_world = g ? g->world_size : 0;
  const std::string backend = g && g->has_job ? g->job.backend : std::string();

  collectives_.consume(event, generation, gen_world);
  loss_.consume(event, generation, gen_world, backend);
  sampler_.consume(event, generation);
  timeline_.consume(event);
  failures_.consume(event);

  if (event.kind == EventKind::RunStopped && stopped_at_ns_ < 0) stopped_at_ns_ = event.t_end_ns;
  // Its checkpoint counts the steps and epochs done; the last trained is one less of each.
  if (event.kind == EventKind::Restart) restart_from_ = {event.step - 1, event.epoch - 1};
  if (event.rank < 0 || event.rank >= kMaxWorldSize) return;
  if (static_cast<int>(ranks_.size()) <= event.rank) ranks_.resize(event.rank + 1);
  RankProgress& rank = ranks_[event.rank];
  if (rank.generation != generation) rank = RankProgress{generation};
  const bool newest = !generations_.empty() && generation == generations_.back().index;
  switch (event.kind) {
    case EventKind::StepBegin:
      rank.epoch = std::max(rank.epoch, event.epoch);
      if (event.rank == 0 && newest) own_pace_.begin_step();
      break;
    case EventKind::StepEnd:
      rank.step = std::max(rank.step, event.step);
      rank.epoch = std::max(rank.epoch, event.epoch);
      if (event.rank == 0 && newest) {
        step_rate_.add(event.t_end_ns, event.step);
        own_pace_.end_step(event.t_end_ns - event.t_begin_ns, event.step);
      }
      if (!is_joined_step(event)) rank.last_loss = event.value;
      break;
    case EventKind::Error:  // not those of the teardown a stop asked for
      if (stopped_at_ns_ < 0 || event.t_end_ns < stopped_at_ns_) {
        keep(errors_, said_by_rank(event));
        errors_generation_ = generation;
      }
      break;
    case EventKind::Log:
      keep(logs_, said_by_rank(event));
      break;
    case EventKind::GateWait:
      if (event.rank == 0 && newest) own_pace_.held(event.t_end_ns - event.t_begin_ns);
      break;
    case EventKind::RunEnd: {
      rank.ended = true;
      rank.trained_to_the_end = event.text == "done";
      // (a set of workers ended by a live change reports after the new set began: not its speed)
      if (event.rank == 0 && newest) us_per_step_ = event.value;
      const int world = world_size();
      bool all = world > 0;
      for (int r = 0; r < world && r < static_cast<int>(ranks_.size()); ++r)
        all = all && ranks_[r].ended && ranks_[r].generation == generation;
      run_ended_ = all && static_cast<int>(ranks_.size()) >= world;
      break;
    }
    default:
      break;
  }
}

bool RunModel::trained_to_the_end() const {
  if (!run_ended_) return false;
  const int world = world_size();
  for (int r = 0; r < world && r < static_cast<int>(ranks_.size()); ++r)
    if (!ranks_[r].trained_to_the_end) return false;
  return true;
}

const FailureDiagnosis& RunModel::failure() const {
  const uint64_t version = events_seen_ + (exits_noted_ << 40);
  if (version != failure_cache_version_) {
    failure_cache_ = failures_.diagnose(world_size());
    failure_cache_version_ = version;
  }
  return failure_cache_;
}

void RunModel::note_exits(const std::vector<RankExit>& exits) {
  failures_.note_exits(exits);
  ++exits_noted_;
}

RunModel::Holdings RunModel::holdings() const {
  Holdings h;
  h.collectives = collectives_.size();
  for (size_t i = 0; i < collectives_.size(); ++i) h.transfers += collectives_.at(i).transfers.size();
  for (int r = 0; r < timeline_.lanes(); ++r) h.timeline_spans += timeline_.span_count(r);
  for (const auto& r : loss_.series().rank_loss) h.loss_points += r.size();
  h.loss_points += loss_.series().epoch_mse.size();
  h.sampler_indices = sampler_.held_indices();
  return h;
}

size_t RunModel::ingest(const EventStore& store) {
  if (store.size() < store_cursor_) clear();
  const size_t before = store_cursor_;
  store_cursor_ = store.for_each(store_cursor_, [this](const Event& e) { consume(e); });
  return store_cursor_ - before;
}

}  // namespace ringlab::view_model
