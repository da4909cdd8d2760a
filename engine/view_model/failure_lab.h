#pragma once
// The app's failure lab: one fault chosen from a short list, turned into the same JobConfig
// fields `ringlab run --fault / --uneven / --join / --timeout` fill, and the lesson that goes
// with it. The lesson texts are English templates with named fields ({rank}, {step}, {ms},
// {batches}, {timeout}, {world}); the app translates the template, then fills it in.
#include <cstdint>
#include <string>

#include "engine/job/fault_plan.h"
#include "engine/job/job_config.h"

namespace ringlab::view_model {

enum class LabFault : uint8_t { None, Kill, Delay, Drop, Skip, Extra, Resize, Uneven };
inline constexpr LabFault kLabFaults[] = {LabFault::None,  LabFault::Kill,  LabFault::Delay,
                                          LabFault::Drop,  LabFault::Skip,  LabFault::Extra,
                                          LabFault::Resize, LabFault::Uneven};

struct FailureLabSettings {
  LabFault fault = LabFault::None;
  int rank = 1;             // the rank the fault happens to
  int64_t step = 5;         // kill, drop, skip, extra, resize: the training step it happens at
  int delay_ms = 20;        // delay: how long the straggler sleeps every step
  int64_t batches = 1;      // uneven: batches per epoch taken away from `rank`
  bool join = false;        // uneven: PyTorch's Join
  int max_restarts = 0;     // the controller restarts the group from the epoch checkpoint
  double timeout_s = 6.0;   // how long a rank waits for a peer before it gives up
};

// "Kill a rank", "Straggler (delay)", ...: the lab's menu entry (English; the app translates).
const char* lab_fault_title(LabFault fault);

// Writes the lab's fault into `job` (faults, uneven, join, timeout), replacing what was there.
// The rank is clamped into the job's world. With no fault the timeout goes back to
// `quiet_timeout_s` (the scenario's own).
void apply_lab(const FailureLabSettings& lab, double quiet_timeout_s, JobConfig& job);

// The lab's settings that describe `job`'s first fault (or its uneven inputs), so a scenario
// file with faults opens with the lab showing them. `max_restarts` is not part of a job.
FailureLabSettings lab_from_job(const JobConfig& job);

// Pause and live changes are off for a run whose faults break the collective order (see
// ringlab::breaks_collective_order in job/fault_plan.h).
using ringlab::breaks_collective_order;

// The same run from a shell: "ringlab run -n 4 --fault kill:2@5 --timeout 6 --max-restarts 1".
std::string lab_command_line(const FailureLabSettings& lab, const JobConfig& job);

// What will happen and why, as PyTorch / NCCL would do it: an English template with named
// fields; render_lesson() fills them in. A second template says what restarts change ("" when
// they change nothing for this fault).
const char* lab_lesson(LabFault fault, bool join);
const char* lab_restart_lesson(LabFault fault, int max_restarts);
std::string render_lesson(const char* text, const FailureLabSettings& lab, int world_size);

}  // namespace ringlab::view_model
