// sf_bench_decode's rows with int8 weights at dim128 (see bench_decode.cpp; a unit of its own so that
// none takes long to compile).
#include "bench_decode.hpp"

using namespace sf_bench_decode;

BENCHMARK(prefill<gpt2_style(dim128_shape), sf::int8>)->Name("prefill/int8/dim128/gpt2")->Unit(benchmark::kMicrosecond);
BENCHMARK(prefill<llama_style(dim128_shape), sf::int8>)->Name("prefill/int8/dim128/llama")->Unit(benchmark::kMicrosecond);
BENCHMARK(decode<gpt2_style(dim128_shape), sf::int8>)->Name("decode/int8/dim128/gpt2")->Unit(benchmark::kMicrosecond);
BENCHMARK(decode<llama_style(dim128_shape), sf::int8>)->Name("decode/int8/dim128/llama")->Unit(benchmark::kMicrosecond);
