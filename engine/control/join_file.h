#pragma once
// What another node needs to join a multi-node run: node 0's store address, the run's shape,
// its id and its token. Node 0 writes it (mode 0600: the token is in it) with `--join-file`;
// a node joins with `ringlab run --join-file PATH --node-rank K`. The token never travels on a
// command line, where `ps` would show it to every user of the machine: the file or the
// RINGLAB_TOKEN environment variable carries it.
#include <cstdint>
#include <string>

namespace ringlab {

struct JoinInfo {
  std::string master_addr;
  uint16_t master_port = 0;
  int nnodes = 1;
  int nproc_per_node = 1;
  std::string run_id;
  std::string token;
};

// Writes `info` as JSON, whole or not at all, readable by its owner only. Throws Error naming
// the path and why it could not be written.
void write_join_file(const std::string& path, const JoinInfo& info);
// Reads a join file; throws InputError naming the path and what is missing or wrong (a file
// that others can read is refused too: whoever read it could join the run).
JoinInfo read_join_file(const std::string& path);

// The command another node runs to join, without the token: with the file when there is one
// ("ringlab run --join-file PATH --node-rank K"), else with every flag spelled out, the token
// to be set in RINGLAB_TOKEN.
std::string join_command(const JoinInfo& info, const std::string& join_file);

}  // namespace ringlab
