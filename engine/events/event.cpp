#include "engine/events/event.h"

namespace ringlab {

const char* to_string(EventKind kind) {
  switch (kind) {
    case EventKind::RunBegin: return "run_begin";
    case EventKind::StepBegin: return "step_begin";
    case EventKind::StepEnd: return "step_end";
    case EventKind::Forward: return "forward";
    case EventKind::Backward: return "backward";
    case EventKind::BucketReady: return "bucket_ready";
    case EventKind::CollectiveBegin: return "collective_begin";
    case EventKind::CollectiveEnd: return "collective_end";
    case EventKind::ChunkTransfer: return "chunk";
    case EventKind::OptimizerStep: return "optimizer_step";
    case EventKind::SamplerShard: return "sampler_shard";
    case EventKind::EpochEnd: return "epoch_end";
    case EventKind::Error: return "error";
    case EventKind::Log: return "log";
    case EventKind::GateWait: return "gate_wait";
    case EventKind::RunEnd: return "run_end";
    case EventKind::FlightRecord: return "flight_record";
    case EventKind::Fault: return "fault";
    case EventKind::FinalParameters: return "final_parameters";
    case EventKind::RunStopped: return "run_stopped";
    case EventKind::TornDown: return "torn_down";
    case EventKind::Restart: return "restart";
    case EventKind::WorldChange: return "world_change";
    case EventKind::CollectiveMismatch: return "collective_mismatch";
    case EventKind::StepVote: return "step_vote";
    case EventKind::Straggle: return "straggle";
  }
  return "unknown";
}

const char* to_string(FaultKind kind) {
  switch (kind) {
    case FaultKind::Kill: return "kill";
    case FaultKind::Delay: return "delay";
    case FaultKind::Drop: return "drop";
    case FaultKind::Skip: return "skip";
    case FaultKind::Extra: return "extra";
    case FaultKind::Resize: return "resize";
  }
  return "?";
}

std::optional<FaultKind> fault_kind_named(std::string_view name) {
  for (int k = 0; k <= kLastFaultKind; ++k)
    if (name == to_string(static_cast<FaultKind>(k))) return static_cast<FaultKind>(k);
  return std::nullopt;
}

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::Other: return "other";
    case ErrorCode::Timeout: return "timeout";
    case ErrorCode::PeerClosed: return "peer closed";
    case ErrorCode::CollectiveMismatch: return "collective mismatch";
    case ErrorCode::BadInput: return "bad input";
  }
  return "?";
}

std::string said_by_rank(const Event& e) {
  const std::string prefix = "rank " + std::to_string(e.rank) + ": ";
  return e.text.rfind(prefix, 0) == 0 ? e.text : prefix + e.text;
}

}  // namespace ringlab
