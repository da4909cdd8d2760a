#include "engine/runtime/event.h"

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
  }
  return "unknown";
}

}  // namespace ringlab
