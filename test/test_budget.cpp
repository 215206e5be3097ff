// sf::time_budget (staticformer/budget.hpp) on a clock of the test's own: a simulated loop whose
// steps take a chosen time, so a rate that falls after the probe is the same on every machine and
// build. A sized schedule must end inside the budget with its learning rate continuous and at the
// floor; a fixed length must keep its plain schedule, bit for bit, and only be stopped.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "staticformer/budget.hpp"

namespace {

double fake_now = 0;  // the test's clock
double fake_clock() { return fake_now; }

struct run_result {
  std::int64_t steps = 0, total = 0;
  double seconds = 0;          // on the budget's clock, validations included
  int shortened = 0;
  std::vector<double> lrs;     // each step's learning rate
  bool stopped = false;        // by the budget
};

constexpr sf::schedule_shape shape{.max_lr = 4e-3, .min_lr = 0.0, .warmup = 0.05};

// The caller's loop of examples/train: a step takes step_time(fraction of the budget elapsed)
// seconds, a validation (every tenth of the sized schedule, and at its end) 5 ms.
run_result simulate(double budget_seconds, std::int64_t steps, const std::function<double(double)>& step_time) {
  fake_now = 100;
  sf::time_budget budget({.seconds = budget_seconds, .time_source = fake_clock}, shape, steps);
  constexpr double eval = 0.005;
  fake_now += eval;
  budget.validated(eval);  // step 0's
  budget.start(0);
  run_result r;
  std::int64_t k = 0;
  while (!budget.finished(k)) {
    if (budget.out_of_time()) {
      r.stopped = true;
      break;
    }
    r.lrs.push_back(budget.lr(k));
    fake_now += step_time(budget.elapsed() / budget_seconds);
    ++k;
    budget.stepped(k);
    if (budget.validation_due(k)) {
      fake_now += eval;
      budget.validated(eval);
    }
  }
  budget.settle(k);
  r.steps = k;
  r.total = budget.total();
  r.seconds = budget.elapsed();
  r.shortened = budget.shortened();
  return r;
}

// The largest change of the learning rate between two steps from step `from` on.
double largest_jump(const std::vector<double>& lrs, std::size_t from) {
  double jump = 0;
  for (std::size_t i = from + 1; i < lrs.size(); ++i) jump = std::max(jump, std::abs(lrs[i] - lrs[i - 1]));
  return jump;
}

TEST(TimeBudget, SteadyRateKeepsThePlainSchedule) {
  const run_result r = simulate(10, 0, [](double) { return 1e-3; });  // 1000 steps/s
  EXPECT_EQ(r.shortened, 0);
  EXPECT_EQ(r.steps, r.total);
  EXPECT_FALSE(r.stopped);
  // 95% of 10 s less 11 validations at 1000 steps/s (± a step: the clock's rounding)
  EXPECT_NEAR(static_cast<double>(r.total), static_cast<double>(sf::steps_for_budget(9.5, 1000.0, 0.005, 0)), 1.0);
  EXPECT_LE(r.seconds, 9.5 + 1e-9);
  // after the probe, the plain warm-up and cosine of the length it fixed, bit for bit
  const sf::lr_schedule plain = shape.of_length(r.total);
  for (std::int64_t k = 1000; k < r.steps; ++k) ASSERT_EQ(r.lrs[static_cast<std::size_t>(k)], plain(k)) << k;
}

// The rate halves at once, then keeps falling slowly: each time the schedule is shortened so that
// it ends inside the budget, with the learning rate going on without a jump down to the floor.
TEST(TimeBudget, FallingRateShortensTheRestOfTheSchedule) {
  for (const double when : {0.1, 0.3, 0.6, 0.85}) {
    const run_result r = simulate(10, 0, [when](double f) { return f < when ? 1e-3 : 2e-3 * (1.0 + 0.2 * (f - when)); });
    SCOPED_TRACE(when);
    EXPECT_GE(r.shortened, 1);
    EXPECT_FALSE(r.stopped);
    EXPECT_EQ(r.steps, r.total);
    EXPECT_LE(r.seconds, 10.0);
    EXPECT_GE(r.seconds, 0.9 * 10.0);  // not shortened much more than it had to be
    // continuous: after the probe (0.25 s, ~250 steps) no step changes the rate by more than a few
    // times the steepest step of the plain schedule of the final length (its warm-up's); a schedule
    // restarted on the shorter length instead would jump by a good part of max_lr
    const sf::lr_schedule plain = shape.of_length(r.total);
    double plain_jump = 0;
    for (std::int64_t k = 1; k < r.total; ++k) plain_jump = std::max(plain_jump, std::abs(plain(k) - plain(k - 1)));
    EXPECT_LT(largest_jump(r.lrs, 500), 4 * plain_jump);
    EXPECT_LT(r.lrs.back(), 1e-3 * shape.max_lr);  // the last step at the floor (within a step of it)
  }
}

// --steps N: the plain schedule of N, never shortened; a budget too short stops it.
TEST(TimeBudget, FixedLengthIsOnlyStopped) {
  const run_result r = simulate(10, 20000, [](double f) { return f < 0.3 ? 1e-3 : 2e-3; });
  EXPECT_EQ(r.shortened, 0);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.total, 20000);
  EXPECT_LT(r.steps, 20000);
  const sf::lr_schedule plain = shape.of_length(20000);
  for (std::int64_t k = 0; k < r.steps; ++k) ASSERT_EQ(r.lrs[static_cast<std::size_t>(k)], plain(k)) << k;
}

// lr_schedule::at between whole steps: operator()'s bits at whole steps, and in between inside.
TEST(TimeBudget, FractionalStepsOfTheSchedule) {
  constexpr sf::lr_schedule s{.max_lr = 1e-2, .min_lr = 1e-3, .warmup_steps = 10, .total_steps = 110};
  for (std::int64_t k = 0; k < 120; ++k) ASSERT_EQ(s.at(static_cast<double>(k)), s(k)) << k;
  for (std::int64_t k = 10; k < 110; ++k) {
    const double mid = s.at(static_cast<double>(k) + 0.5);
    EXPECT_LE(mid, s(k));
    EXPECT_GE(mid, s(k + 1));
  }
}

}  // namespace
