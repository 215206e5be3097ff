// bench_decode — token-by-token generation with the KV-cache decoder (decode.hpp), one core.
//
// One iteration generates a whole context from a one-token prompt, greedily, as llama2.c's
// run.c does in ../shared/peers (gen_driver.c): prefill 1 token, then T-1 steps, each followed
// by an argmax of the logits — T forward positions per iteration. B = 1.
//
//   build/benchmark/sf_bench_decode --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Shapes: nano (V65 T64 D64 H4 L2 F256) and dim128 (V256 T128 D128 H4 L4 F512), each in two
// styles: gpt2 (LayerNorm, learned positions, GELU-tanh, tied head, biases — the training demo's
// model) and llama (RMSNorm, RoPE, ReLU, untied, no biases — the closest to llama2.c's, which
// has SwiGLU with three F×D matrices where ours has two).
// prefill/<weights>/dim128/<style>: one prompt of T tokens prefilled in one call.
// Counters: tokens/s, and GFLOP/s of the matrix products (2 FLOP per multiply-add: the weight
// products, the head, and the attention's q·k and p·v over the positions actually attended).
// The float rows are registered here, the int8 rows in bench_decode_int8.cpp (dim128) and
// bench_decode_int8_nano.cpp; the code is bench_decode.hpp.
#include "bench_decode.hpp"

using namespace sf_bench_decode;

BENCHMARK(prefill<gpt2_style(dim128_shape), float>)->Name("prefill/float/dim128/gpt2")->Unit(benchmark::kMicrosecond);
BENCHMARK(prefill<llama_style(dim128_shape), float>)->Name("prefill/float/dim128/llama")->Unit(benchmark::kMicrosecond);
BENCHMARK(decode<gpt2_style(nano_shape), float>)->Name("decode/float/nano/gpt2")->Unit(benchmark::kMicrosecond);
BENCHMARK(decode<llama_style(nano_shape), float>)->Name("decode/float/nano/llama")->Unit(benchmark::kMicrosecond);
BENCHMARK(decode<gpt2_style(dim128_shape), float>)->Name("decode/float/dim128/gpt2")->Unit(benchmark::kMicrosecond);
BENCHMARK(decode<llama_style(dim128_shape), float>)->Name("decode/float/dim128/llama")->Unit(benchmark::kMicrosecond);

static const bool cpu_context = (sf_bench::add_cpu_context(/*bf16_rows=*/false), true);  // (cpu_context.hpp)

BENCHMARK_MAIN();
