#pragma once
// The transport's own floor, behind `ringlab bench pingpong`: rank 0 sends a message to rank 1,
// which sends it straight back, on the same process group (isend/irecv, as the ring uses them).
// Half a round trip is the one-way time of one message of that size; a small message gives the
// latency every ring step pays at least once, a large one the bandwidth.
// Then the exchange: ranks 0 and 1 send a message of the same size to each other at once, cut
// into the ring's segments, as the two ranks of a 2-rank ring do at every step (both directions
// share the machine's cores and the transport's threads). Whatever its algorithm, a 2-rank
// all-reduce has each rank send and receive a whole tensor's worth of bytes, so one exchange of
// the tensor is the transport's floor under it. Each rank must also add half the tensor, which a
// transport that keeps the cores busy copying cannot hide: the bench times those sums too.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/dist/process_group.h"
#include "engine/dist/ring_allreduce.h"

namespace ringlab {

struct PingPongResult {
  size_t bytes = 0;
  double one_way_us = 0;      // median round trip / 2
  double min_one_way_us = 0;  // fastest round trip / 2: the undisturbed cost on a busy machine
  double gbps = 0;            // bytes / one_way_us, GB = 1e9 bytes
  double exchange_us = 0;     // median time for both messages of an exchange to arrive
  double exchange_gbps = 0;   // bytes each way / exchange_us
  // The sums a 2-rank all-reduce of the message must do besides moving it: each rank adds the
  // half it owns (half the message) from what arrived. Rank 0's median µs for that, in the
  // exchange's segments, each added from a segment just written, on its own (not overlapped).
  double sum_us = 0;
  double exchange_sum_gbps = 0;  // bytes / (exchange_us + sum_us): moved and summed, one after the other
};

constexpr size_t kMaxPingPongBytes = size_t{1} << 30;

// "4,10948,16M": sizes in bytes (K, M, G suffixes) from 4 B to 1G, each rounded down to whole
// floats; InputError naming `flag` for anything else.
std::vector<size_t> parse_pingpong_sizes(const std::string& text, const std::string& flag);

// Refuses (InputError, with the sizes) sizes whose buffers would not fit in the memory available.
void check_pingpong_memory(const std::vector<size_t>& sizes, int world_size);

// A collective call: every rank of `group` calls it with the same arguments. Ranks 0 and 1 bounce
// the message `warmup + iters` times, then exchange it as often; the others only wait at the
// closing barrier. Every rank returns rank 0's figures.
// `exchange_cut`: the segments the exchange is cut into and how many receives it keeps posted
// ahead (the ring's tuning for the backend, ring_tuning_for).
PingPongResult bench_pingpong_size(ProcessGroup& group, size_t bytes, const RingTuning& exchange_cut, int iters,
                                   int warmup);

std::string pingpong_table_header();
std::string pingpong_table_row(const PingPongResult& r);
nlohmann::json pingpong_to_json(const PingPongResult& r);
PingPongResult pingpong_from_json(const nlohmann::json& j);

}  // namespace ringlab
