// staticformer/kernels/weights_in.hpp — where a product's weights are between two uses of them.
//
// A decoder step of a model past the caches (sf::decoder: weights of more than 8 MiB) reads every
// weight from memory once per token; a product is then bound by the memory, not the arithmetic,
// and the kernels read the matrix in an order (and with vectors) that the memory serves fastest:
// kernels::gemv<weights_in::memory> and gemv_panels<…> (kernels/gemv.hpp), q8::matvec(…, memory)
// (kernels/q8.hpp). The sums, and so the bits, are the same either way.
#pragma once

namespace sf::kernels {
enum class weights_in { cache, memory };
}  // namespace sf::kernels
