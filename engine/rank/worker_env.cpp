#include "engine/rank/worker_env.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <optional>
#include <vector>

#include "engine/core/error.h"
#include "engine/job/job_config.h"
#include "engine/net/endpoint.h"

namespace ringlab {
namespace {

using Lookup = std::function<std::optional<std::string>(const std::string&)>;

[[noreturn]] void fail(const std::string& what) {
  throw InputError(ErrorContext{-1, "worker environment", -1}, what);
}

// One number read from the environment, remembering which variable it came from so that a
// message about it names what the user actually set. `text` is that variable's own text where it
// is more than the number (Slurm's "2(x3),1", of which the number is one node's share).
struct Setting {
  long long value = 0;
  std::string name;
  std::string text;
  std::string shown() const { return name + "=" + (text.empty() ? std::to_string(value) : text); }
};

// The variables that place a rank, by who started it.
struct PlacementNames {
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;
};
constexpr PlacementNames kMpiNames{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                                   "OMPI_COMM_WORLD_LOCAL_SIZE"};
constexpr PlacementNames kTorchrunNames{"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"};
constexpr PlacementNames kSlurmNames{"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_STEP_TASKS_PER_NODE"};

const PlacementNames& names_of(const WorkerEnv& env) {
  return env.from_mpi ? kMpiNames : env.from_slurm ? kSlurmNames : kTorchrunNames;
}

// Slurm's srun sets SLURM_STEP_ID in every task of a job step. A batch script has SLURM_PROCID=0
// and the allocation's SLURM_NTASKS as well, but it is no rank of anything: a worker started
// there directly runs alone, as anywhere else.
bool started_by_srun(const Lookup& get) { return get("SLURM_STEP_ID").has_value(); }

long long parse_number(const std::string& name, const std::string& text) {
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    fail(name + "='" + text + "' is not a whole number");
  }
  return value;
}

std::optional<Setting> read_one(const Lookup& get, const std::string& name) {
  if (auto text = get(name)) return Setting{parse_number(name, *text), name, ""};
  return std::nullopt;
}

// OpenMPI's variable when mpirun set it, else torchrun's, else nothing.
std::optional<Setting> read_setting(const Lookup& get, const std::string& mpi_name, const std::string& torch_name) {
  if (auto mpi = read_one(get, mpi_name)) return mpi;
  return read_one(get, torch_name);
}

void require_below(const Setting& index, const Setting& size) {
  if (index.value >= size.value) {
    fail(index.shown() + " but " + size.shown() + ": " + index.name + " must be below " + size.name);
  }
}

void require_at_least(const Setting& s, long long minimum) {
  if (s.value < minimum) fail(s.shown() + ": must be at least " + std::to_string(minimum));
}

// Checked before the narrowing to int, so 4294967297 cannot wrap around to a plausible 1.
void require_at_most(const Setting& s, long long maximum) {
  if (s.value > maximum) fail(s.shown() + ": must be at most " + std::to_string(maximum));
}

uint16_t parse_port(const std::string& text, const std::string& shown) {
  try {
    return net::parse_port(text, shown);
  } catch (const InputError& e) {
    fail(e.what());
  }
}

// Rank and world size: both or neither, like torch's env:// rendezvous. Slurm's only where
// neither OpenMPI's nor torchrun's are there: torchrun started by srun sets RANK for its workers.
void read_rank_and_size(const Lookup& get, WorkerEnv& env) {
  auto rank = read_setting(get, "OMPI_COMM_WORLD_RANK", "RANK");
  auto size = read_setting(get, "OMPI_COMM_WORLD_SIZE", "WORLD_SIZE");
  env.from_mpi = (rank && rank->name.starts_with("OMPI_")) || (size && size->name.starts_with("OMPI_"));
  if (!rank && !size && started_by_srun(get)) {
    rank = read_one(get, kSlurmNames.rank);
    size = read_one(get, kSlurmNames.size);
    env.from_slurm = rank || size;
  }
  if (rank.has_value() != size.has_value()) {
    const Setting& set = rank ? *rank : *size;
    const std::string missing = rank ? names_of(env).size : names_of(env).rank;
    fail(set.shown() + " is set but " + missing + " is not: set both, or neither to run one process alone");
  }
  if (!rank) return;  // one process alone: rank 0 of 1
  require_at_least(*size, 1);
  require_at_most(*size, kMaxWorldSize);
  require_at_least(*rank, 0);
  require_below(*rank, *size);
  env.rank = static_cast<int>(rank->value);
  env.world_size = static_cast<int>(size->value);
}

// This node's share of a Slurm step's tasks: SLURM_STEP_TASKS_PER_NODE ("2(x3),1": two tasks on
// each of three nodes, then one) at this node's index, SLURM_NODEID.
std::optional<Setting> slurm_local_size(const Lookup& get) {
  std::string name = "SLURM_STEP_TASKS_PER_NODE";
  auto text = get(name);
  if (!text) text = get(name = "SLURM_TASKS_PER_NODE");
  if (!text) return std::nullopt;
  const std::vector<int> counts = parse_slurm_tasks_per_node(*text, name + "=" + *text);
  const Setting node = read_one(get, "SLURM_NODEID").value_or(Setting{0, "SLURM_NODEID", ""});
  if (node.value < 0 || node.value >= static_cast<long long>(counts.size()))
    fail(node.shown() + " but " + name + "=" + *text + " lists " + std::to_string(counts.size()) +
         " node(s): SLURM_NODEID must be below that");
  return Setting{counts[static_cast<size_t>(node.value)], name, *text};
}

// Local rank and size. Missing ones follow torchrun's layout (global rank = node * local size
// + local rank), and with no LOCAL_* at all every rank is on this node.
void read_local_rank_and_size(const Lookup& get, WorkerEnv& env) {
  Setting rank{env.rank, names_of(env).rank, ""};
  Setting size{env.world_size, names_of(env).size, ""};
  auto local_rank = read_setting(get, "OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK");
  auto local_size = read_setting(get, "OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE");
  if (env.from_slurm) {
    if (!local_rank) local_rank = read_one(get, kSlurmNames.local_rank);
    if (!local_size) local_size = slurm_local_size(get);
  }
  if (local_size) {
    require_at_least(*local_size, 1);
    require_at_most(*local_size, kMaxWorldSize);
    if (local_size->value > size.value) {
      fail(local_size->shown() + " but " + size.shown() + ": " + local_size->name + " must not exceed " + size.name);
    }
  } else {
    local_size = size;
  }
  if (local_rank) {
    require_at_least(*local_rank, 0);
    require_below(*local_rank, *local_size);
    // The ranks before this one on its node all have smaller global ranks.
    if (local_rank->value > rank.value) {
      fail(local_rank->shown() + " but " + rank.shown() + ": " + local_rank->name + " cannot exceed " + rank.name);
    }
  } else {
    local_rank = Setting{rank.value % local_size->value, rank.name, ""};
  }
  env.local_rank = static_cast<int>(local_rank->value);
  env.local_world_size = static_cast<int>(local_size->value);
}

// The node's index: torchrun's GROUP_RANK, Slurm's SLURM_NODEID; else torchrun's layout, which
// puts LOCAL_WORLD_SIZE ranks on each node in rank order. (mpirun's ranks have no such index.)
void read_group_rank(const Lookup& get, WorkerEnv& env) {
  std::optional<Setting> node;
  if (env.from_slurm) node = read_one(get, "SLURM_NODEID");
  else if (!env.from_mpi && get("RANK")) node = read_one(get, "GROUP_RANK");
  if (!node) {
    env.group_rank = env.rank / env.local_world_size;
    return;
  }
  require_at_least(*node, 0);
  require_below(*node, Setting{env.world_size, names_of(env).size, ""});  // every node holds a rank
  env.group_rank = static_cast<int>(node->value);
}

// Rank 0 hosts the store (see worker.cpp), and srun starts rank 0 on the first node of its step.
// SLURM_JOB_NODELIST is the allocation's, whose first node is the step's unless the step was
// given fewer or other nodes.
std::string slurm_master_host(const Lookup& get) {
  for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
    if (auto list = get(name)) return first_slurm_host(*list, std::string(name) + "=" + *list);
  }
  fail("srun started this task, but neither MASTER_ADDR nor SLURM_STEP_NODELIST nor SLURM_JOB_NODELIST is set: "
       "set MASTER_ADDR to the host of rank 0");
}

void read_master(const Lookup& get, WorkerEnv& env) {
  if (auto addr = get("MASTER_ADDR")) {
    if (addr->empty()) fail("MASTER_ADDR is set but empty: give the store's host, e.g. 127.0.0.1");
    env.master_addr = *addr;
  } else if (env.from_slurm) {
    env.master_addr = slurm_master_host(get);
  }
  if (auto port = get("MASTER_PORT")) env.master_port = parse_port(*port, "MASTER_PORT=" + *port);
}

// "host:port" or "[::1]:port". Unset or empty: the worker reports no events.
void read_event_addr(const Lookup& get, WorkerEnv& env) {
  auto text = get("RINGLAB_EVENT_ADDR");
  if (!text || text->empty()) return;
  try {
    const net::Endpoint at = net::parse_endpoint(*text, "RINGLAB_EVENT_ADDR=" + *text);
    env.event_addr = at.host;
    env.event_port = at.port;
  } catch (const InputError& e) {
    fail(e.what());
  }
}

WorkerEnv parse_with(const Lookup& get) {
  WorkerEnv env;
  read_rank_and_size(get, env);
  read_local_rank_and_size(get, env);
  read_group_rank(get, env);
  read_master(get, env);
  read_event_addr(get, env);
  env.run_id = get("RINGLAB_RUN_ID").value_or("");
  env.token = get("RINGLAB_TOKEN").value_or("");
  return env;
}

}  // namespace

std::string WorkerEnv::describe() const {
  std::string text = "rank " + std::to_string(rank) + " of " + std::to_string(world_size) + " (local " +
                     std::to_string(local_rank) + " of " + std::to_string(local_world_size) + "), master " +
                     master_addr + ":" + std::to_string(master_port);
  if (from_mpi) text += ", started by mpirun";
  if (from_slurm) text += ", started by srun";
  return text;
}

std::string first_slurm_host(const std::string& hostlist, const std::string& what) {
  auto bad = [&](const std::string& why) {
    fail(what + ": " + why + " (a Slurm hostlist is e.g. node[01-04,07],gpu5)");
  };
  std::string host;
  size_t i = 0;
  while (i < hostlist.size() && hostlist[i] != ',') {
    if (hostlist[i] == ']') bad("']' without '['");
    if (hostlist[i] != '[') {
      host += hostlist[i++];
      continue;
    }
    const size_t close = hostlist.find(']', i);
    if (close == std::string::npos) bad("'[' without ']'");
    const std::string ranges = hostlist.substr(i + 1, close - i - 1);
    // The first number of the first range, as written: its leading zeros are part of the name
    // ("node[01-03]" is node01, node02, node03).
    const std::string first = ranges.substr(0, ranges.find_first_of(",-"));
    if (first.empty() || first.find_first_not_of("0123456789") != std::string::npos)
      bad("'[" + ranges + "]' does not start with a number");
    host += first;
    i = close + 1;
  }
  if (host.empty()) bad("no host name before the first ','");
  return host;
}

std::vector<int> parse_slurm_tasks_per_node(const std::string& text, const std::string& what) {
  // Far beyond any allocation, and low enough that "1(x99999999999)" cannot exhaust memory.
  constexpr long long kMaxNodes = 1 << 20;
  std::vector<int> counts;
  size_t begin = 0;
  while (true) {
    const size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    const size_t paren = item.find('(');
    const std::string count_text = item.substr(0, paren);
    long long count = 0, repeat = 1;
    auto number = [&](const std::string& digits, long long& out) {
      const char* last = digits.data() + digits.size();
      auto [ptr, ec] = std::from_chars(digits.data(), last, out);
      return !digits.empty() && ec == std::errc() && ptr == last;
    };
    bool ok = number(count_text, count) && count >= 1 && count <= kMaxWorldSize;
    if (ok && paren != std::string::npos) {
      ok = item.size() > paren + 3 && item.compare(paren, 2, "(x") == 0 && item.back() == ')' &&
           number(item.substr(paren + 2, item.size() - paren - 3), repeat) && repeat >= 1;
    }
    if (!ok) fail(what + ": '" + item + "' is neither N nor N(xM), with N tasks in 1.." +
                  std::to_string(kMaxWorldSize) + " on each of M nodes");
    if (repeat > kMaxNodes - static_cast<long long>(counts.size()))
      fail(what + ": more than " + std::to_string(kMaxNodes) + " nodes");
    counts.insert(counts.end(), static_cast<size_t>(repeat), static_cast<int>(count));
    if (end == text.size()) break;
    begin = end + 1;
  }
  return counts;
}

WorkerEnv read_worker_env() {
  return parse_with([](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  });
}

WorkerEnv parse_worker_env(const std::map<std::string, std::string>& vars) {
  return parse_with([&](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

}  // namespace ringlab
