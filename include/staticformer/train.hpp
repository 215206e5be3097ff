// staticformer/train.hpp — one training step, and the validation loss.
//
//   auto tr = std::make_unique<sf::trainer<C>>();         // ~ tens of MB: heap or static, never the stack
//   sf::init_params(tr->p, seed);
//   tr->opt.options = {.weight_decay = 0.1, .decay = sf::decay_on::matrices};
//   sf::dataset<C> data(ids, 0.1, seed);
//   const sf::lr_schedule sched{.max_lr = 3e-3, .min_lr = 3e-4, .warmup_steps = 100, .total_steps = 2000};
//   while (tr->steps() < 2000) {
//     sf::step_result r = tr->step(data, sched, /*clip=*/1.0);     // loss before the update
//   }
//   double val = tr->evaluate(data);                          // mean loss over the validation split
//
// A step is: draw a batch, zero the gradients, forward and backward (sf::forward_backward: in
// chunks of sequences when the batch has more than 512 tokens), clip the global
// gradient norm, one AdamW update with the learning rate of the schedule at the
// current update count. Everything that decides the next step lives in the trainer
// (parameters, moments, update count) and in the dataset's data_state, so saving
// those and restoring them (staticformer/io/checkpoint.hpp) continues bit for bit.
// A step allocates nothing.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "staticformer/config.hpp"
#include "staticformer/data.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/params.hpp"

namespace sf {

struct step_result {
  float loss = 0;       // training loss of the batch, before the update
  float grad_norm = 0;  // global gradient norm before clipping
  double lr = 0;        // learning rate used
  bool updated = true;  // false when the gradient norm was not finite (update skipped)
};

template <config C>
struct trainer {
  using params_t = params<C, float>;
  params_t p;                      // parameters
  params_t g;                      // gradients
  adamw_state<params_t> opt;       // moments and update count
  batch_activations<C, float> acts;  // saved for backward: one chunk's (model.hpp, forward_backward)
  tokens_t<C> tokens;              // the current batch
  targets_t<C> targets;

  // Updates done so far.
  std::int64_t steps() const { return opt.t; }

  // One step with the learning rate of the schedule at the current update count.
  step_result step(dataset<C>& data, const lr_schedule& schedule, double clip_norm) {
    return step(data, schedule(opt.t), clip_norm);
  }
  // One step with learning rate `lr` (a schedule the caller computes: sf::time_budget::lr).
  step_result step(dataset<C>& data, double lr, double clip_norm) {
    step_result r;
    data.next_batch(tokens, targets);
    zero(g);
    r.loss = forward_backward(p, g, acts, tokens, targets);
    r.grad_norm = clip_norm > 0 ? clip_grad_norm(g, clip_norm) : static_cast<float>(global_norm(g));
    r.lr = lr;
    if (std::isfinite(r.grad_norm)) {
      opt.step(p, g, r.lr);
    } else {
      r.updated = false;  // a NaN/Inf gradient would poison the moments; the caller decides what to do
    }
    return r;
  }

  // Mean loss per target over the validation split. max_batches = 0: all of it, in
  // order; otherwise max_batches × B windows spread evenly over the split (always the
  // same ones), a cheaper estimate for progress reports. Uses the activation buffers:
  // call between steps, not between forward and backward.
  double evaluate(const dataset<C>& data, std::size_t max_batches = 0) {
    const std::size_t nb = data.val_batches(), windows = data.val_windows();
    double sum = 0;
    std::size_t count = 0;
    if (max_batches == 0 || max_batches * C.B >= windows) {
      for (std::size_t k = 0; k < nb; ++k) {
        data.val_batch(k, tokens, targets);
        const std::size_t rows = data.val_rows(k);
        sum += static_cast<double>(forward(p, acts, tokens, targets)) * static_cast<double>(rows);  // T targets a row
        count += rows;
      }
    } else {
      const std::size_t n = max_batches * C.B;  // windows used
      for (std::size_t k = 0; k < max_batches; ++k) {
        for (std::size_t b = 0; b < C.B; ++b) data.val_window((k * C.B + b) * windows / n, b, tokens, targets);
        sum += static_cast<double>(forward(p, acts, tokens, targets)) * static_cast<double>(C.B);
        count += C.B;
      }
    }
    return count ? sum / static_cast<double>(count) : 0.0;
  }
};

}  // namespace sf
