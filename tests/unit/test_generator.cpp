// The generator must draw exactly what PyTorch draws: test vectors from torch-fidelity.md.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/core/generator.h"
#include "engine/data/tensor_dataset.h"
#include "engine/nn/mlp.h"

using ringlab::Generator;

TEST_CASE("manual_seed(5): the first three 32-bit draws") {
  // The reference sheet lists these three values last-first; drawn in order they are these
  // (std::mt19937(5)'s stream, which the data and weight vectors below confirm).
  Generator g(5);
  CHECK(g.random() == 953453411u);
  CHECK(g.random() == 236996814u);
  CHECK(g.random() == 3739766767u);
}

TEST_CASE("manual_seed resets the stream and the cached normal") {
  Generator g(7);
  std::vector<float> a(5), b(5);
  g.normal_(std::span<float>(a.data(), 1));  // leaves a cached second value
  g.manual_seed(7);
  g.normal_(b);
  g.manual_seed(7);
  g.normal_(a);
  CHECK(a == b);
}

TEST_CASE("random64 takes the first draw as the high word") {
  Generator g(5);
  CHECK(g.random64() == ((uint64_t{953453411u} << 32) | 236996814u));
}

TEST_CASE("randn(5) with seed 7 takes the cached float64 scalar path") {
  Generator g(7);
  std::vector<float> x(5);
  g.normal_(x);
  const float expected[] = {-0.146795f, 0.786141f, 0.946822f, -1.114344f, 1.690790f};
  for (int i = 0; i < 5; ++i) CHECK(x[i] == doctest::Approx(expected[i]).epsilon(2e-6));
}

TEST_CASE("randn(20) with seed 7 redraws the tail block") {
  Generator g(7);
  std::vector<float> x(20);
  g.normal_(x);
  CHECK(x[0] == doctest::Approx(-0.820135).epsilon(2e-6));
  CHECK(x[3] == doctest::Approx(-1.388404).epsilon(2e-6));
  CHECK(x[19] == doctest::Approx(-0.356723).epsilon(2e-6));
}

TEST_CASE("uniform_ uses 24 bits per float") {
  Generator g(5);
  std::vector<float> u(3);
  g.uniform_(u, 0.0f, 1.0f);
  CHECK(u[0] == static_cast<float>(953453411u & 0xFFFFFF) / 16777216.0f);
  CHECK(u[1] == static_cast<float>(236996814u & 0xFFFFFF) / 16777216.0f);
}

TEST_CASE("the seed's data and first weights, in the script's order of draws") {
  Generator g(5);
  const auto d = ringlab::data::make_regression_dataset(256, 6, g);
  const float x0[] = {1.842330f, 0.518887f, -1.711922f, -1.701379f, 2.019419f, -0.268614f};
  const float x255[] = {0.340295f, -1.261080f, 0.014194f, 0.540052f, 0.066392f, 0.344019f};
  for (int j = 0; j < 6; ++j) {
    CHECK(d.x[j] == doctest::Approx(x0[j]).epsilon(1e-5));
    CHECK(d.x[255 * 6 + j] == doctest::Approx(x255[j]).epsilon(1e-5));
  }
  ringlab::nn::Mlp model(6, {48, 48}, 1);
  model.reset_parameters(g);
  const float w0[] = {0.036556f, -0.014175f, 0.378096f, 0.312183f};
  for (int j = 0; j < 4; ++j) CHECK(model.parameters()[j] == doctest::Approx(w0[j]).epsilon(1e-4));
}

TEST_CASE("w and noise of the seed: Y = X w + 0.1 noise") {
  Generator g(5);
  std::vector<float> x(256 * 6), w(6), noise(256);
  g.normal_(x);
  g.normal_(w);
  g.normal_(noise);
  const float we[] = {0.349851f, 0.403764f, -0.738524f, -0.840477f, -1.246118f, 0.361268f};
  for (int j = 0; j < 6; ++j) CHECK(w[j] == doctest::Approx(we[j]).epsilon(1e-5));
  const float ne[] = {-1.029909f, -0.871142f, -0.497536f, -0.474125f};
  for (int j = 0; j < 4; ++j) CHECK(noise[j] == doctest::Approx(ne[j]).epsilon(1e-5));
}

TEST_CASE("randperm is a permutation and depends on the seed") {
  Generator a(1), b(2);
  auto p = a.randperm(100), q = b.randperm(100);
  CHECK(p != q);
  std::sort(p.begin(), p.end());
  for (int i = 0; i < 100; ++i) CHECK(p[i] == i);
  CHECK(Generator(3).randperm(0).empty());
  CHECK(Generator(3).randperm(1) == std::vector<int64_t>{0});
}
