#pragma once
// Runs body(rank) for every rank of a world on a thread of its own and waits for all of them:
// the ranks of a LocalProcessGroup talk to each other, so they must run at the same time.
#include <thread>
#include <vector>

template <typename Body>
void on_ranks(int world, Body&& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) threads.emplace_back([&, r] { body(r); });
  for (auto& t : threads) t.join();
}
