#include "engine/rank/worker_env.h"

#include <charconv>
#include <cstdlib>
#include <functional>
#include <optional>

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
// message about it names what the user actually set.
struct Setting {
  long long value = 0;
  std::string name;
  std::string shown() const { return name + "=" + std::to_string(value); }
};

long long parse_number(const std::string& name, const std::string& text) {
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    fail(name + "='" + text + "' is not a whole number");
  }
  return value;
}

// OpenMPI's variable when mpirun set it, else torchrun's, else nothing.
std::optional<Setting> read_setting(const Lookup& get, const std::string& mpi_name, const std::string& torch_name) {
  for (const std::string& name : {mpi_name, torch_name}) {
    if (auto text = get(name)) return Setting{parse_number(name, *text), name};
  }
  return std::nullopt;
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

// Rank and world size: both or neither, like torch's env:// rendezvous.
void read_rank_and_size(const Lookup& get, WorkerEnv& env) {
  auto rank = read_setting(get, "OMPI_COMM_WORLD_RANK", "RANK");
  auto size = read_setting(get, "OMPI_COMM_WORLD_SIZE", "WORLD_SIZE");
  env.from_mpi = (rank && rank->name.starts_with("OMPI_")) || (size && size->name.starts_with("OMPI_"));
  if (rank.has_value() != size.has_value()) {
    const Setting& set = rank ? *rank : *size;
    std::string missing = rank ? (env.from_mpi ? "OMPI_COMM_WORLD_SIZE" : "WORLD_SIZE")
                               : (env.from_mpi ? "OMPI_COMM_WORLD_RANK" : "RANK");
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

// Local rank and size. Missing ones follow torchrun's layout (global rank = node * local size
// + local rank), and with no LOCAL_* at all every rank is on this node.
void read_local_rank_and_size(const Lookup& get, WorkerEnv& env) {
  Setting rank{env.rank, env.from_mpi ? "OMPI_COMM_WORLD_RANK" : "RANK"};
  Setting size{env.world_size, env.from_mpi ? "OMPI_COMM_WORLD_SIZE" : "WORLD_SIZE"};
  auto local_rank = read_setting(get, "OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK");
  auto local_size = read_setting(get, "OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE");
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
    local_rank = Setting{rank.value % local_size->value, rank.name};
  }
  env.local_rank = static_cast<int>(local_rank->value);
  env.local_world_size = static_cast<int>(local_size->value);
}

void read_master(const Lookup& get, WorkerEnv& env) {
  if (auto addr = get("MASTER_ADDR")) {
    if (addr->empty()) fail("MASTER_ADDR is set but empty: give the store's host, e.g. 127.0.0.1");
    env.master_addr = *addr;
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
  return text;
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
