// The MLP's hand-written backward against finite differences, the ready-callback order DDP
// relies on, MSE and SGD formulas.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/core/generator.h"
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
