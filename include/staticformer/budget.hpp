// staticformer/budget.hpp — a training schedule sized to a time budget (optional host header:
// <chrono>, <ctime>, <string>; examples/train and `staticformer train --seconds S` use it).
//
//   auto budget = sf::time_budget::for_run(60, /*limit=*/true, threads, /*eval_every=*/0,
//                                          {.max_lr = 4e-3, .warmup = 0.05}, /*steps=*/0);  // 0: sized
//   budget.timed([&] { return tr->evaluate(data, 32); });   // step 0's validation: its cost, for the sizing
//   budget.start(tr->steps());
//   while (!budget.finished(tr->steps()) && !budget.out_of_time()) {
//     tr->step(data, budget.lr(tr->steps()), clip);
//     const auto e = budget.stepped(tr->steps());  // ends the probe when it is due (sized), or shortens the
//     if (e != sf::time_budget::event::none)      //   rest of a sized schedule that would overrun (shortened)
//       std::puts(budget.event_line(e, tr->steps(), "<the schedule>").c_str());
//     if (budget.validation_due(tr->steps())) budget.timed([&] { return tr->evaluate(data, 32); });
//   }
//   budget.settle(tr->steps());             // (a run stopped during the probe: its length now)
//
// The learning-rate schedule (linear warm-up, cosine to a floor: sf::lr_schedule) must end inside
// the budget, and how many steps fit depends on the machine. So a sized run measures: the probe, its
// first steps (`probe` of the budget, but at least `probe_seconds` or a tenth of the budget, and at
// least `probe_steps` steps), times them on the budget's clock, and then fixes the length N so that
// the whole schedule, with its periodic validations, ends at `fill` of the budget, at the slower of
// the rates of the probe's two halves; warm-up and decay are those of N from then on. During the probe
// each step uses the schedule of the length the rate measured so far gives (before the first step
// an endless one, whose first learning rate is ~0), so the learning rate follows the final
// schedule's warm-up without a jump when N is fixed.
//
// The rate can fall after the probe (a busy machine: another program on the other half of the
// core, a lower clock), and a schedule sized at the probe's rate then runs past the budget and is
// cut short. So a sized run keeps measuring: every `check` of the budget it takes the rate of the
// steps since the last check, and when at that rate the rest of the schedule (its validations
// included) would end past the middle of the margin (97.5% of the budget with `fill` 0.95), it
// shortens the schedule so that it ends at `fill` again (or, that time passed, half-way to the
// budget's end): the rest of the curve, from where the run is, is compressed into the steps that
// still fit, so the learning rate goes on from its current value without a jump and still reaches
// the floor at the last step (lr_schedule::at between whole steps). A rate that halves at once,
// up to 85% of the budget, still ends inside it (test/test_budget.cpp); one that falls later, or
// keeps falling faster than the checks see, can still be cut. A schedule is only shortened, never
// lengthened (a machine growing faster leaves more of the margin unused). Cost: the curve of a
// shortened run is not a plain warm-up and cosine of its final length (a run resumed from it,
// examples/train --resume, goes on with the plain one of that length), and a sized run is not the
// same bit for bit on another machine or in another run. A fixed length (steps > 0) is, and
// is never shortened: the budget only stops it early (the caller says so).
//
// The clock: the CPU time of the process (one training thread: the time on one core, which other
// programs on a busy machine do not stretch) or the wall clock (several threads, whose CPU time
// adds up): for_run() takes CPU time with one thread, wall-clock time with more. Validations timed by
// timed() (or reported with validated()) are left out of the measured rate and counted separately
// in the sizing.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>

#include "staticformer/optim.hpp"

namespace sf {

enum class budget_clock { cpu, wall };

// The schedule apart from its length.
struct schedule_shape {
  double max_lr = 1e-3;
  double min_lr = 0.0;
  double warmup = 0.0;  // the warm-up as a fraction of the steps, [0, 1)

  constexpr lr_schedule of_length(std::int64_t total) const {
    return {.max_lr = max_lr,
            .min_lr = min_lr,
            .warmup_steps = static_cast<std::int64_t>(warmup * static_cast<double>(total)),
            .total_steps = total};
  }
};

// The number of steps whose time, with that of their periodic validations, fits `seconds`:
// `steps_per_second` without validation, `eval_seconds` one validation, one every `eval_every`
// steps and one at the last step (eval_every 0: every N/10 steps, so at most 11). At least 1.
constexpr std::int64_t steps_for_budget(double seconds, double steps_per_second, double eval_seconds,
                                        std::int64_t eval_every) {
  double n = 0;
  if (eval_every > 0)  // N / rate + (N / every + 1) × eval ≤ seconds
    n = (seconds - eval_seconds) / (1.0 / steps_per_second + eval_seconds / static_cast<double>(eval_every));
  else
    n = steps_per_second * (seconds - 11.0 * eval_seconds);
  constexpr double most = 1e12;  // sf::io::training_settings::max_steps
  return !(n >= 1.0) ? 1 : n >= most ? static_cast<std::int64_t>(most) : static_cast<std::int64_t>(n);
}

class time_budget {
 public:
  struct options {
    double seconds = 60;                      // the budget of the training loop (steps and validations)
    budget_clock clock = budget_clock::cpu;   // on which clock
    double fill = 0.95;                       // a sized schedule ends within this fraction of it
    double probe = 0.025;                     // the probe: this fraction of the budget,
    double probe_seconds = 0.25;              //   at least this long (or a tenth of a shorter budget)
    std::int64_t probe_steps = 20;            //   and at least this many steps
    std::int64_t eval_every = 0;              // the caller's validations: every N steps (0: N / 10)
    double check = 0.05;                      // a sized run re-measures the rate this often (a fraction
                                              //   of the budget, at least the probe's length)
    double (*time_source)() = nullptr;        // seconds from some origin, instead of `clock` (tests)
  };
  // What stepped() did.
  enum class event { none, sized, shortened };

  // steps > 0: a schedule of that length (the budget only limits it); 0: sized by a probe.
  time_budget(const options& o, const schedule_shape& shape, std::int64_t steps)
      : o_(o), shape_(shape), total_(steps > 0 ? steps : 0), every_(total_ > 0 ? interval() : 0) {}

  // A training run's budget (examples/train, `staticformer train`): `seconds` on the CPU time of one
  // thread, the wall clock of several (`threads` > 1). It limits the loop when `limit` is set, and
  // always when it sizes the schedule (steps 0); otherwise (a fixed length) there is no time limit.
  static time_budget for_run(double seconds, bool limit, std::size_t threads, std::int64_t eval_every,
                             const schedule_shape& shape, std::int64_t steps) {
    return time_budget({.seconds = limit || steps <= 0 ? seconds : HUGE_VAL,
                        .clock = threads > 1 ? budget_clock::wall : budget_clock::cpu,
                        .eval_every = eval_every},
                       shape, steps);
  }
  bool limited() const { return o_.seconds < HUGE_VAL; }
  const char* clock_name() const { return o_.clock == budget_clock::wall ? "wall-clock" : "CPU"; }

  // Seconds on the budget's clock (from an arbitrary origin): to time a validation with.
  double now() const {
    if (o_.time_source) return o_.time_source();
    if (o_.clock == budget_clock::cpu) return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }

  // The budget starts now, with `steps` updates done (a resumed run: more than 0).
  void start(std::int64_t steps) {
    t0_ = now();
    start_steps_ = steps;
    eval_time_ = 0;
  }
  double elapsed() const { return now() - t0_; }
  bool out_of_time() const { return elapsed() >= o_.seconds; }
  const options& settings() const { return o_; }

  bool sizing() const { return total_ == 0; }   // still probing
  bool sized_by_probe() const { return probed_; }
  int shortened() const { return shortened_; }  // how many times the rest of the schedule was shortened
  double last_rate() const { return rate_; }    // steps per second at the last check (0: none yet)
  std::int64_t total() const { return total_; }  // 0 while probing
  // The length as planned so far: total(), or during the probe the current estimate (0 before a step).
  std::int64_t planned(std::int64_t steps) const {
    if (total_ > 0) return total_;
    return steps > start_steps_ ? std::max(estimate(steps), steps) : 0;
  }
  bool finished(std::int64_t steps) const { return total_ > 0 && steps >= total_; }

  // The schedule as planned, with `steps` updates done: of the estimate during the probe (before its
  // first step, of an endless run), of the fixed length after it. A shortened run's steps do not
  // follow it: lr() gives theirs.
  lr_schedule schedule(std::int64_t steps) const {
    const std::int64_t n = planned(steps);
    return shape_.of_length(n > steps ? n : std::int64_t{1'000'000'000'000});
  }
  // The learning rate of the next step (update number `steps`): the planned schedule's, or once
  // shortened the probe's schedule at the point of its curve this step maps to,
  //   lr = schedule(N_sized).at(from + (steps − at) · scale)
  double lr(std::int64_t steps) const {
    if (shortened_ > 0) return shape_.of_length(sized_).at(from_ + static_cast<double>(steps - at_) * scale_);
    return schedule(steps)(steps);
  }

  // A validation took `seconds` (on now()'s clock): left out of the rate, and the sizing counts
  // the schedule's validations at the time of the last one reported (before start() too).
  void validated(double seconds) {
    eval_time_ += seconds;
    eval_seconds_ = seconds;
  }
  // Runs `validate` (a validation) on the budget's clock and reports its time: validated(). Returns
  // what it returns.
  template <class F>
  auto timed(F&& validate) {
    const double t0 = now();
    auto result = validate();
    validated(now() - t0);
    return result;
  }
  // The validations' interval in steps: eval_every, or with 0 a tenth of the schedule (at least 1)
  // once its length is fixed; 0 while probing.
  std::int64_t eval_every() const { return o_.eval_every > 0 ? o_.eval_every : every_; }
  // Whether a validation follows the step that made it `steps`: every eval_every() steps and at
  // the last one.
  bool validation_due(std::int64_t steps) const {
    const std::int64_t every = eval_every();
    return every > 0 && (steps % every == 0 || finished(steps));
  }

  // The line (without its newline) that says what stepped() did after step `step`: sized,
  //   "schedule: <schedule> (measured: K steps in S <clock> seconds, R steps/s<more>)"
  // (`schedule`: the caller's description of the fixed length, `more`: what it adds), or shortened,
  //   "schedule: shortened to N steps at step K (the rate fell to R steps/s; ...)".
  // "" for none.
  std::string event_line(event e, std::int64_t step, const std::string& schedule, const std::string& more = "") const {
    char text[256];
    if (e == event::sized)
      std::snprintf(text, sizeof text, "(measured: %lld steps in %.2f %s seconds, %.0f steps/s",
                    static_cast<long long>(probe_steps_), probe_seconds_, clock_name(),
                    static_cast<double>(probe_steps_) / probe_seconds_);
    else if (e == event::shortened)
      std::snprintf(text, sizeof text,
                    "shortened to %lld steps at step %lld (the rate fell to %.0f steps/s; the rest of the cosine "
                    "compressed into them)",
                    static_cast<long long>(total_), static_cast<long long>(step), rate_);
    else
      return "";
    return e == event::sized ? "schedule: " + schedule + " " + text + more + ")" : std::string("schedule: ") + text;
  }

  // After a step: ends the probe when it is due, fixing the length (sized); later, at each check,
  // shortens the rest of a sized schedule that would overrun at the rate measured since the last one.
  event stepped(std::int64_t steps) {
    if (total_ > 0) return probed_ ? watch(steps) : event::none;
    const double t = step_seconds(), probe = probe_length();
    if (half_steps_ == 0 && t >= 0.5 * probe) half_steps_ = steps - start_steps_, half_seconds_ = t;
    if (steps - start_steps_ < o_.probe_steps || t < probe) return event::none;
    settle(steps);
    return event::sized;
  }
  // Fixes the length now if it is not yet (a run stopping during the probe).
  void settle(std::int64_t steps) {
    if (total_ > 0) return;
    probed_ = true;
    probe_steps_ = steps - start_steps_;
    probe_seconds_ = step_seconds();
    total_ = steps > start_steps_ ? std::max(estimate(steps), steps) : std::max<std::int64_t>(steps, 1);
    sized_ = total_;
    every_ = interval();
    check_steps_ = steps;
    check_seconds_ = probe_seconds_;
  }
  // The probe's length in seconds (with at least probe_steps steps).
  double probe_length() const {
    return std::max(o_.probe * o_.seconds, std::min(o_.probe_seconds, 0.1 * o_.seconds));
  }
  // What the probe measured: its steps and their seconds (validations left out).
  std::int64_t probe_steps() const { return probe_steps_; }
  double probe_seconds() const { return probe_seconds_; }

 private:
  double step_seconds() const { return std::max(elapsed() - eval_time_, 1e-9); }
  // The validations' interval for the length total_ (fixed): eval_every, or N / 10 (at least 1).
  std::int64_t interval() const { return o_.eval_every > 0 ? o_.eval_every : std::max<std::int64_t>(1, total_ / 10); }
  // The length the rate measured so far gives (steps > start_steps_): the slower of the probe's
  // two halves once both are measured (a machine whose speed varies gets the cautious figure).
  std::int64_t estimate(std::int64_t steps) const {
    const std::int64_t done = steps - start_steps_;
    const double t = step_seconds();
    double rate = static_cast<double>(done) / t;
    if (half_steps_ > 0 && done > half_steps_ && t > half_seconds_)
      rate = std::min({rate, static_cast<double>(half_steps_) / half_seconds_,
                       static_cast<double>(done - half_steps_) / (t - half_seconds_)});
    return start_steps_ + steps_for_budget(o_.fill * o_.seconds, rate, eval_seconds_, o_.eval_every);
  }

  // A check, when one is due: the rate since the last one, and the rest of the schedule shortened
  // if at that rate it would end past the middle of the margin.
  event watch(std::int64_t steps) {
    const double t = step_seconds();
    if (steps >= total_ || t - check_seconds_ < std::max(o_.check * o_.seconds, probe_length())) return event::none;
    rate_ = static_cast<double>(steps - check_steps_) / (t - check_seconds_);
    check_steps_ = steps;
    check_seconds_ = t;
    const double left = static_cast<double>(total_ - steps), used = elapsed();
    const double need = left / rate_ + (left / static_cast<double>(every_) + 1.0) * eval_seconds_;
    if (used + need <= 0.5 * (1.0 + o_.fill) * o_.seconds) return event::none;
    const double room = std::max(o_.fill * o_.seconds - used, 0.5 * (o_.seconds - used));
    const std::int64_t fits = steps_for_budget(room, rate_, eval_seconds_, every_);
    if (fits >= total_ - steps) return event::none;
    // The rest of the curve, from this step's point on it to the probe's end, over `fits` steps.
    const double from = shortened_ > 0 ? from_ + static_cast<double>(steps - at_) * scale_ : static_cast<double>(steps);
    from_ = from;
    at_ = steps;
    scale_ = (static_cast<double>(sized_) - from) / static_cast<double>(fits);
    total_ = steps + fits;
    ++shortened_;
    return event::shortened;
  }

  options o_;
  schedule_shape shape_;
  std::int64_t total_ = 0;
  std::int64_t every_ = 0;  // the validations' interval once the length is fixed (interval()); 0 before
  std::int64_t start_steps_ = 0;
  double t0_ = 0, eval_time_ = 0, eval_seconds_ = 0;
  bool probed_ = false;
  std::int64_t probe_steps_ = 0, half_steps_ = 0;
  double probe_seconds_ = 0, half_seconds_ = 0;
  // After the probe: its length, the last check, the rate it measured;
  // once shortened, step at_ is the point from_ of the probe's schedule and each step scale_ more.
  std::int64_t sized_ = 0, check_steps_ = 0, at_ = 0;
  double check_seconds_ = 0, rate_ = 0, from_ = 0, scale_ = 1;
  int shortened_ = 0;
};

}  // namespace sf
