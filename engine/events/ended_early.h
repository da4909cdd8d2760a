#pragma once
// A rank whose process ended normally while another still waited in a later collective never
// joined that collective. Gloo pairs each rank's Nth all-reduce with the others' Nth, whatever
// step each is at, so a rank that skipped a batch (or had fewer) goes on unnoticed until it
// finishes one collective early; the error of the rank it left waiting (the peer closed its
// connection) is only the echo. The failure lab's table and the controller's report both say
// this one answer.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/events/killed_rank_position.h"

namespace ringlab {

// Which of `ranks` a rank that ended after collective `own_collective` (-1: before any) left
// waiting: those inside a later collective (so never itself, if it is among them). Empty when
// it left nobody waiting.
std::vector<size_t> left_waiting(int64_t own_collective, const std::vector<PeerPosition>& ranks);

}  // namespace ringlab
