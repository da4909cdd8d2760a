#pragma once
// The failure lab's words, translated: one line per rank for the ring's cards and the
// timeline's lanes, one sentence per failure, and each fault's lesson with its numbers filled in.
#include <string>

#include "engine/view_model/failure_diagnosis.h"
#include "engine/view_model/failure_lab.h"

namespace ringlab::viz {

// "all-reduce #7 · ring step 2 of 6" (or "barrier #3"): where a rank was.
std::string CollectivePosition(const view_model::RankDiagnosis& rank, int world_size);
// "killed by SIGKILL at step 5", "waiting in all-reduce #7 · ring step 2 of 6", "" for a healthy rank.
std::string RankFailureLabel(const view_model::RankDiagnosis& rank, const view_model::FailureDiagnosis& failure);
// A rank's row in the failure table: the culprit's label, or what happened to a bystander
// ("timed out waiting for a peer", "lost its connection to a peer", "left waiting for it").
std::string RankOutcome(const view_model::RankDiagnosis& rank, const view_model::FailureDiagnosis& failure);
// "Rank 2 was killed by SIGKILL at step 5": the failure in one sentence.
std::string FailureHeadline(const view_model::FailureDiagnosis& failure);
// The lab's lesson (and what restarts change) for its settings, translated and filled in.
std::string LabLesson(const view_model::FailureLabSettings& lab, int world_size);
std::string LabRestartLesson(const view_model::FailureLabSettings& lab, int world_size);
const char* LabFaultTitle(view_model::LabFault fault);
// "#7 all-reduce of bucket 0 (2737 floats) at step 5": a collective's fingerprint in words.
std::string FingerprintText(const CollectiveFingerprint& fingerprint);

}  // namespace ringlab::viz
