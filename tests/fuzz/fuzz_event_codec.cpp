// libFuzzer target: the event stream's decoder (engine/net/event_codec.h), the code that
// stands between a socket and the controller's event store.
//
// Properties checked on every input:
//   - decode(), decode_body() and decode_hello_body() either return or throw ringlab::Error;
//     any other exception, a crash, or a sanitizer report is a finding;
//   - a frame that decodes re-encodes to exactly the same bytes (the format has one spelling
//     per event), so the decoder can neither invent nor drop a field.
//
// RINGLAB_FUZZ_WRITE_SEEDS=DIR: write a seed corpus made with the real encoder into DIR and exit.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/net/event_codec.h"
#include "tests/fuzz/fuzz_seeds.h"

namespace {

using namespace ringlab;

void write_seeds(const std::string& dir) {
  std::vector<uint8_t> out;
  event_codec::encode_hello({event_codec::kVersion, "0123456789abcdef0123456789abcdef", 3}, out);
  fuzz::write_seed(dir, "hello", out);

  Event step;
  step.kind = EventKind::StepEnd;
  step.rank = 1;
  step.step = 12;
  step.epoch = 2;
  step.value = 0.125;
  out.clear();
  event_codec::encode(step, out);
  fuzz::write_seed(dir, "step_end", out);

  Event chunk;
  chunk.kind = EventKind::ChunkTransfer;
  chunk.rank = 2;
  chunk.phase = 1;
  chunk.ring_step = 3;
  chunk.chunk = 1;
  chunk.src = 1;
  chunk.dst = 2;
  chunk.bytes = 16;
  chunk.values = {1.0f, -2.0f, 0.5f, 4.0f};
  out.clear();
  event_codec::encode(chunk, out);
  fuzz::write_seed(dir, "chunk", out);

  Event shard;
  shard.kind = EventKind::SamplerShard;
  shard.epoch = 0;
  shard.indices = {5, 3, 7, 1};
  out.clear();
  event_codec::encode(shard, out);
  fuzz::write_seed(dir, "shard", out);

  Event error;
  error.kind = EventKind::Error;
  error.text = "rank 1: ring_allreduce: step 3: timed out";
  out.clear();
  event_codec::encode(error, out);
  fuzz::write_seed(dir, "error", out);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return fuzz::write_seeds_if_asked(write_seeds); }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  try {
    const Event event = event_codec::decode(input);
    std::vector<uint8_t> again;
    event_codec::encode(event, again);
    if (again.size() != size || !std::equal(again.begin(), again.end(), data)) {
      std::fprintf(stderr, "event frame of %zu bytes decodes, but encodes back to %zu different bytes\n", size,
                   again.size());
      std::abort();
    }
  } catch (const Error&) {
  }
  // The same bytes as a hello body (what the server reads first on every connection).
  try {
    const event_codec::Hello hello = event_codec::decode_hello_body(input);
    std::vector<uint8_t> again;
    event_codec::encode_hello(hello, again);
    if (again.size() != size + 4 || !std::equal(again.begin() + 4, again.end(), data)) {
      std::fprintf(stderr, "hello of %zu bytes decodes, but encodes back to different bytes\n", size);
      std::abort();
    }
  } catch (const Error&) {
  }
  return 0;
}
