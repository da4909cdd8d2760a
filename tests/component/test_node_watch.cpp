// Node 0 watching the other nodes of a multi-node run through its store (a real server on
// 127.0.0.1): a node whose beats stand still is lost, unless its controller said first that it
// stops for Ctrl-Z; and at the end such a node's exits are waited for only as long as asked.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "engine/control/node_rendezvous.h"
#include "engine/net/store.h"

using namespace ringlab;
using namespace std::chrono_literals;

namespace {

const std::string kHost = "127.0.0.1";
const std::string kToken = "node-watch-token";
constexpr std::chrono::milliseconds kSilence = 50ms;

struct TwoNodes {
  StoreServer server{kHost, 0, kToken};
  StoreClient node0{kHost, server.port(), kToken, 5000ms};
  StoreClient node1{kHost, server.port(), kToken, 5000ms};
  NodeWatch watch{2};
};

}  // namespace

TEST_CASE("a node whose beats stand still is taken for lost; one that said it is suspended is not") {
  TwoNodes run;
  beat(run.node1, 1);
  CHECK(run.watch.silent(run.node0, kSilence).empty());  // it just beat
  std::this_thread::sleep_for(3 * kSilence);
  CHECK(run.watch.silent(run.node0, kSilence) == std::vector<int>{1});
  CHECK(run.watch.suspended().empty());

  publish_suspended(run.node1, 1, true);  // Ctrl-Z there: said, then no beat at all
  std::this_thread::sleep_for(3 * kSilence);
  CHECK(run.watch.silent(run.node0, kSilence).empty());
  CHECK(run.watch.suspended() == std::vector<int>{1});

  publish_suspended(run.node1, 1, false);  // `fg`: it says so and beats again
  beat(run.node1, 1);
  CHECK(run.watch.silent(run.node0, kSilence).empty());
  CHECK(run.watch.suspended().empty());
  std::this_thread::sleep_for(3 * kSilence);
  CHECK(run.watch.silent(run.node0, kSilence) == std::vector<int>{1});  // resumed, then silent: lost again
}

TEST_CASE("at the end, a suspended node's exits are waited for as long as asked, then it is named") {
  TwoNodes run;
  beat(run.node1, 1);
  publish_suspended(run.node1, 1, true);
  std::vector<int> lost;
  // A stop a person asked for waits no time for a suspended node (the run's --timeout otherwise).
  const std::vector<RankExit> exits = collect_exits(run.node0, 2, 10'000ms, 0ms, run.watch, lost);
  CHECK(exits.empty());
  CHECK(lost == std::vector<int>{1});

  // Resumed, it hands its exits over, and they are taken.
  publish_suspended(run.node1, 1, false);
  RankExit done;
  done.rank = 2;
  done.node = 1;
  publish_exits(run.node1, 1, {done});
  lost.clear();
  const std::vector<RankExit> taken = collect_exits(run.node0, 2, 10'000ms, 0ms, run.watch, lost);
  CHECK(lost.empty());
  REQUIRE(taken.size() == 1);
  CHECK(taken[0].rank == 2);
}
