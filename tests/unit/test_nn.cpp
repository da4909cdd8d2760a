// The MLP's hand-written backward against finite differences, the ready-callback order DDP
// relies on, MSE and SGD formulas.
#include <doctest/doctest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "engine/core/generator.h"
#include "engine/nn/gemm.h"
#include "engine/nn/mlp.h"
#include "engine/nn/mse.h"
#include "engine/nn/sgd.h"

using namespace ringlab;

namespace {

double loss_of(nn::Mlp& m, const std::vector<float>& x, const std::vector<float>& y, int64_t batch) {
  auto pred = m.forward(x, batch);
  return nn::mse_loss(pred, y);
}

}  // namespace

TEST_CASE("gradient check: backward matches central finite differences") {
  Generator g(11);
  nn::Mlp m(3, {5, 4}, 2);
  m.reset_parameters(g);
  const int64_t batch = 6;
  std::vector<float> x(batch * 3), y(batch * 2);
  g.normal_(x);
  g.normal_(y);

  m.zero_grad();
  auto pred = m.forward(x, batch);
  std::vector<float> dpred(pred.size());
  nn::mse_loss(pred, y, dpred);
  m.backward(dpred);
  const std::vector<float> analytic(m.gradients().begin(), m.gradients().end());

  const float eps = 1e-2f;
  int checked = 0;
  for (size_t i = 0; i < m.num_parameters(); ++i) {
    float& p = m.parameters()[i];
    const float saved = p;
    p = saved + eps;
    const double up = loss_of(m, x, y, batch);
    p = saved - eps;
    const double down = loss_of(m, x, y, batch);
    p = saved;
    const double numeric = (up - down) / (2.0 * eps);
    CAPTURE(i);
    CHECK(analytic[i] == doctest::Approx(numeric).epsilon(2e-2).scale(1e-3));
    ++checked;
  }
  CHECK(checked == 3 * 5 + 5 + 5 * 4 + 4 + 4 * 2 + 2);
}

TEST_CASE("backward reports parameters last-first, each exactly once") {
  Generator g(1);
  nn::Mlp m(6, {48, 48}, 1);
  m.reset_parameters(g);
  std::vector<float> x(4 * 6, 0.5f), y(4, 1.0f);
  auto pred = m.forward(x, 4);
  std::vector<float> d(pred.size());
  nn::mse_loss(pred, y, d);
  std::vector<int> order;
  m.backward(d, [&](int p) { order.push_back(p); });
  CHECK(order == std::vector<int>{5, 4, 3, 2, 1, 0});
  const auto& v = m.parameter_views();
  REQUIRE(v.size() == 6);
  CHECK(v[0].name == "0.weight");
  CHECK(v[2].name == "2.weight");
  CHECK(v[5].name == "4.bias");
  CHECK(m.num_parameters() == 6 * 48 + 48 + 48 * 48 + 48 + 48 + 1);  // 2,737 for the seed's model
}

TEST_CASE("mse_loss and its gradient") {
  std::vector<float> p = {1, 2, 3}, t = {1, 0, 0}, d(3);
  CHECK(nn::mse_loss(p, t, d) == doctest::Approx((0 + 4 + 9) / 3.0));
  CHECK(d[1] == doctest::Approx(2.0 * 2 / 3));
  CHECK(d[0] == 0.0f);
}

TEST_CASE("SGD with momentum and weight decay follows PyTorch's formulas") {
  nn::Sgd sgd(0.1, 0.9, 0.01);
  std::vector<float> p = {1.0f}, g = {0.5f};
  sgd.step(p, g);  // d = 0.5 + 0.01 = 0.51; b = 0.51; p = 1 - 0.051
  CHECK(p[0] == doctest::Approx(1.0 - 0.1 * 0.51));
  const double p1 = p[0];
  sgd.step(p, g);  // d = 0.5 + 0.01 p1; b = 0.9 * 0.51 + d
  const double d2 = 0.5 + 0.01 * p1;
  CHECK(p[0] == doctest::Approx(p1 - 0.1 * (0.9 * 0.51 + d2)));
  nn::Sgd plain(0.03);
  std::vector<float> q = {2.0f};
  plain.step(q, g);
  CHECK(q[0] == doctest::Approx(2.0 - 0.015));
  CHECK(plain.momentum_buffer().empty());
}

// Every case of the optimizer over a vector long enough for vector loops and their tails, against
// the formulas written out one element at a time in float: the same values exactly.
TEST_CASE("SGD gives the same floats, element by element, in each of its cases") {
  struct Case {
    double lr, momentum, decay;
  };
  for (const Case c : {Case{0.05, 0.0, 0.0}, Case{0.05, 0.0, 0.01}, Case{0.05, 0.9, 0.0}, Case{0.05, 0.9, 0.01}}) {
    CAPTURE(c.momentum);
    CAPTURE(c.decay);
    const size_t n = 37;
    std::vector<float> p(n), want(n), buffer(n);
    for (size_t i = 0; i < n; ++i) p[i] = want[i] = 0.25f * static_cast<float>(i) - 3.0f;
    nn::Sgd sgd(c.lr, c.momentum, c.decay);
    const float lr = static_cast<float>(c.lr), m = static_cast<float>(c.momentum), wd = static_cast<float>(c.decay);
    for (int step = 0; step < 3; ++step) {
      std::vector<float> g(n);
      for (size_t i = 0; i < n; ++i) g[i] = std::sin(static_cast<float>(i + 7 * step));
      sgd.step(p, g);
      for (size_t i = 0; i < n; ++i) {
        float d = g[i];
        if (wd != 0.0f) d = d + wd * want[i];
        if (m != 0.0f) {
          d = step == 0 ? d : m * buffer[i] + d;
          buffer[i] = d;
        }
        want[i] = want[i] + -lr * d;
      }
    }
    for (size_t i = 0; i < n; ++i) CHECK(p[i] == want[i]);
    CHECK(sgd.momentum_buffer().size() == (c.momentum != 0.0 ? n : 0));
  }
}

TEST_CASE("transpose moves every element, in whole 8 x 8 blocks and in the edges around them") {
  for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
           {48, 48}, {6, 48}, {48, 6}, {32, 48}, {1, 48}, {48, 1}, {13, 11}, {8, 8}, {17, 24}, {3, 5}}) {
    CAPTURE(rows);
    CAPTURE(cols);
    std::vector<float> in(static_cast<size_t>(rows * cols)), out(in.size(), -1.0f);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
    nn::transpose(in.data(), rows, cols, out.data());
    int wrong = 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) wrong += out[c * rows + r] != in[r * cols + c];
    CHECK(wrong == 0);
  }
}

// The products' arithmetic is part of what parity with PyTorch rests on: with AVX2 and FMA every
// product is one fused multiply-add, tiles and edges alike; without them the plain loops round the
// product and then the sum. Always in the order of K. Checked exactly, on the seed model's
// shapes and on shapes with every kind of edge.
TEST_CASE("gemm_accumulate rounds every product as documented, in the order of K") {
  const bool fused = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  struct Shape {
    int64_t m, n, k;
  };
  for (const Shape s : {Shape{32, 48, 6}, Shape{32, 48, 48}, Shape{32, 1, 48}, Shape{48, 6, 32}, Shape{48, 48, 32},
                        Shape{1, 48, 32}, Shape{32, 48, 1}, Shape{13, 21, 7}, Shape{3, 5, 9}, Shape{7, 70, 5}}) {
    CAPTURE(s.m);
    CAPTURE(s.n);
    CAPTURE(s.k);
    std::vector<float> a(static_cast<size_t>(s.m * s.k)), b(static_cast<size_t>(s.k * s.n));
    std::vector<float> c(static_cast<size_t>(s.m * s.n));
    for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37f * static_cast<float>(i));
    for (size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.11f * static_cast<float>(i));
    for (size_t i = 0; i < c.size(); ++i) c[i] = 0.01f * static_cast<float>(i % 17);
    std::vector<float> want = c;
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        float acc = want[i * s.n + j];
        for (int64_t p = 0; p < s.k; ++p) {
          const float x = a[i * s.k + p], y = b[p * s.n + j];
          if (fused) {
            acc = std::fma(x, y, acc);
          } else {
            const volatile float product = x * y;  // rounded to float before the sum
            acc = acc + product;
          }
        }
        want[i * s.n + j] = acc;
      }
    nn::gemm_accumulate(s.m, s.n, s.k, a.data(), s.k, b.data(), s.n, c.data(), s.n);
    int differ = 0;
    for (size_t i = 0; i < c.size(); ++i) differ += c[i] != want[i];
    CHECK(differ == 0);
  }
}
