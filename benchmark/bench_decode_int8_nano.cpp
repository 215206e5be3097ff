// sf_bench_decode's rows with int8 weights at nano (see bench_decode.cpp; a unit of its own so that
// none takes long to compile).
#include "bench_decode.hpp"

using namespace sf_bench_decode;

BENCHMARK(decode<gpt2_style(nano_shape), sf::int8>)->Name("decode/int8/nano/gpt2")->Unit(benchmark::kMicrosecond);
BENCHMARK(decode<llama_style(nano_shape), sf::int8>)->Name("decode/int8/nano/llama")->Unit(benchmark::kMicrosecond);
