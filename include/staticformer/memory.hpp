// staticformer/memory.hpp — the bytes of every part of a configuration's storage.
//
//   using m = sf::memory_footprint<sf::configs::nano>;
//   static_assert(m::training_total < (1u << 24));
//
// Every number is a compile-time constant: the sizeof of caller-owned structs.
#pragma once
#include <cstddef>

#include "staticformer/model.hpp"
#include "staticformer/params.hpp"
#include "staticformer/reflect.hpp"

namespace sf {

// Bytes of each part of a configuration's storage (all compile-time constants).
template <config C, class T = float>
struct memory_footprint {
  static constexpr std::size_t parameters = sizeof(params<C, T>);
  static constexpr std::size_t gradients = sizeof(params<C, T>);
  static constexpr std::size_t activations = sizeof(sf::activations<C, T>);
  static constexpr std::size_t inference = sizeof(inference_state<C, T>);
  static constexpr std::size_t adam_moments = 2 * sizeof(params<C, T>);
  static constexpr std::size_t training_total = parameters + gradients + activations + adam_moments;
  static constexpr std::size_t parameter_count = sf::parameter_count<params<C, T>>;
};

}  // namespace sf
