#pragma once
// How the controllers of a multi-node run meet, through node 0's store, before and after their
// workers run (torchrun's rendezvous between agents, in a few keys):
//
//   node 0 publishes the run (id, shape, job, its event server's port) ........ kRun
//   node K claims its node rank (a counter: a second claim is refused) ....... claim/K
//   node K checks the run against its own flags, then says it joined ......... joined/K
//                                          ... or why it refused ............. refused/K
//   node 0 waits for every node to join before it starts its workers
//   node 0 says the run starts; the joined nodes start theirs then ............ started
//   node K > 0 counts up while its controller lives, a few times a second .... beat/K
//   node K > 0 says its controller stops for Ctrl-Z (1), and is resumed (0) ... suspended/K
//   a node whose workers failed, or that was stopped, says so ................ abort
//   every node K > 0 publishes how its processes ended ........................ exits/K
//   node 0 publishes the run's verdict, naming the rank that failed first ..... result
//   node K says it read it, so node 0 may take its store down ................. done/K
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/events/event.h"
#include "engine/events/rank_exit.h"
#include "engine/job/job_config.h"

namespace ringlab {

class StoreClient;

struct RunInvitation {
  std::string run_id;
  int nnodes = 1;
  int nproc_per_node = 1;
  uint16_t event_port = 0;  // node 0's event server, on the address the nodes reach its store at
  JobConfig job;
};

// Node 0: what the joining nodes read.
void publish_run(StoreClient& store, const RunInvitation& run);

// Node K > 0: reads node 0's run, checks it against this node's own flags (the run id when one
// was given, the number of nodes, the ranks per node) and claims node rank K. Throws InputError
// naming the disagreement, after leaving the reason where node 0 reads it.
RunInvitation join_run(StoreClient& store, int node_rank, const RunInvitation& mine, bool run_id_given);

// Node 0: waits until every other node has joined, `timeout` in all. Throws Error naming each
// node that refused (and why) or never came; `refused_connections` (the store's own errors, such
// as a wrong token) are added to the message as the likely reason. `stop()`: give up at once
// (false when it was asked to).
bool wait_for_nodes(StoreClient& store, int nnodes, std::chrono::milliseconds timeout, const std::string& store_at,
                    const std::function<std::vector<std::string>()>& refused_connections,
                    const std::function<bool()>& stop);

// Node 0, once every node has joined: the run starts. A joined node waits for it before it starts
// its own workers (beating meanwhile): true once node 0 said so, false when `stop()` came first.
// Throws InputError "node 0 says: ..." when node 0 said instead why the run cannot start (another
// node never came), and Error when node 0 said nothing within `timeout`.
void announce_start(StoreClient& store);
bool wait_for_start(StoreClient& store, int node_rank, std::chrono::milliseconds timeout,
                    const std::function<bool()>& stop);

// Any node: the run must end. `cause` is a stop somebody asked for on that node (Ctrl-C there is
// an interrupted run everywhere), or StopCause::OtherNode for a failure; `why` says it in words
// ("rank 3 killed by SIGKILL"). The first note is kept.
struct AbortNote {
  int node = 0;
  StopCause cause = StopCause::OtherNode;
  std::string why;
};
void publish_abort(StoreClient& store, const AbortNote& note);
std::optional<AbortNote> read_abort(StoreClient& store);

// Node K > 0: one more beat (its monitor calls it a few times a second, and while it waits for
// node 0's verdict). Node 0 watches the beats: a node whose count stood still for `silence` has
// lost its controller (killed, or its machine is gone), and nobody will report its ranks' exits.
void beat(StoreClient& store, int node_rank);
// Node K > 0: its controller is about to stop for Ctrl-Z (true), or has been resumed (false). Its
// ranks train on meanwhile, and node 0 waits for it instead of taking it for lost.
void publish_suspended(StoreClient& store, int node_rank, bool suspended);
class NodeWatch {
 public:
  explicit NodeWatch(int nnodes);
  // The nodes silent for at least `silence` (each looked at once per call). A node that said it
  // is suspended is not silent, however long it stays so.
  std::vector<int> silent(StoreClient& store, std::chrono::milliseconds silence);
  // The nodes suspended at the last look.
  const std::vector<int>& suspended() const { return suspended_; }
  bool is_suspended(int node) const;

 private:
  std::vector<int64_t> beats_, changed_ns_;
  std::vector<int> suspended_;
};

// Node K > 0 publishes its processes' exits; node 0 collects them, each tagged with its node,
// waiting at most `timeout` (`suspended_timeout`, longer or shorter, for a node whose controller
// said it is suspended) and not at all for a node `watch` finds silent. `lost` gets the nodes whose exits
// never came.
void publish_exits(StoreClient& store, int node_rank, const std::vector<RankExit>& exits);
std::vector<RankExit> collect_exits(StoreClient& store, int nnodes, std::chrono::milliseconds timeout,
                                    std::chrono::milliseconds suspended_timeout, NodeWatch& watch,
                                    std::vector<int>& lost);

// Every node's exits as one list, the one that caused the end first: a process killed by a signal
// before one that exited with an error (its peers exit with an error because it died), then the
// one seen first on the wall clock. (A single node's launcher orders its own the same way.)
std::vector<RankExit> merge_exits(std::vector<RankExit> exits);

// Node 0 publishes the run's verdict ("" when it went well); node K reads it within `timeout`
// and says so, and node 0 waits (at most `timeout`) for every node to have read it but the
// `lost` ones, which never said how their ranks ended either.
void publish_result(StoreClient& store, const std::string& failure);
std::optional<std::string> read_result(StoreClient& store, int node_rank, std::chrono::milliseconds timeout);
void wait_results_read(StoreClient& store, int nnodes, std::chrono::milliseconds timeout, NodeWatch& watch,
                       const std::vector<int>& lost);
// A run that could not start (a node never joined): node 0 publishes why, and waits at most
// `timeout` for the nodes that did join to read it, so that they say the same, not that node 0
// vanished.
void tell_joined_nodes(StoreClient& store, int nnodes, const std::string& why, std::chrono::milliseconds timeout);

// How long a node's beats may stand still before node 0 takes its controller for gone.
inline constexpr std::chrono::milliseconds kNodeSilence{3000};

}  // namespace ringlab
