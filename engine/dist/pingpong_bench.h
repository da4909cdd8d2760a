#pragma once
// The transport's own floor, behind `ringlab bench pingpong`: rank 0 sends a message to rank 1,
// which sends it straight back, on the same process group (isend/irecv, as the ring uses them).
// Half a round trip is the one-way time of one message of that size; a small message gives the
// latency every ring step pays at least once, a large one the bandwidth.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/dist/process_group.h"

namespace ringlab {

struct PingPongResult {
  size_t bytes = 0;
  double one_way_us = 0;      // median round trip / 2
  double min_one_way_us = 0;  // fastest round trip / 2: the undisturbed cost on a busy machine
  double gbps = 0;            // bytes / one_way_us, GB = 1e9 bytes
};

// "4,10948,16M": sizes in bytes (K, M, G suffixes), each rounded down to whole floats (at least
// one); InputError naming `flag` for anything else.
std::vector<size_t> parse_pingpong_sizes(const std::string& text, const std::string& flag);

// A collective call: every rank of `group` calls it with the same arguments. Ranks 0 and 1 bounce
// the message `warmup + iters` times; the others only wait at the closing barrier. Every rank
// returns rank 0's figures.
PingPongResult bench_pingpong_size(ProcessGroup& group, size_t bytes, int iters, int warmup);

std::string pingpong_table_header();
std::string pingpong_table_row(const PingPongResult& r);
nlohmann::json pingpong_to_json(const PingPongResult& r);
PingPongResult pingpong_from_json(const nlohmann::json& j);

}  // namespace ringlab
