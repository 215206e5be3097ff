// sf_bench_kernels — GFLOP/s of gemm_nn / gemm_nt / gemm_tn on cubes and model shapes, as a
// percentage of the core's peak FMA throughput measured in the same run.
//
//   build-kernels/benchmark/sf_bench_kernels --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// peak_fma/<backend> runs first: 24 independent FMA chains on registers (2 FMA units ×
// 4-cycle latency × 3), nothing from memory. Every later benchmark reports
//   GFLOPs        2·M·N·K per iteration over its own CPU time (Google Benchmark's rate counter)
//   pct_peak      its GFLOP/s over the highest peak_fma GFLOP/s seen so far in this run, ×100
//   pct_peak_now  its GFLOP/s over the peak measured right after it (10 ms of the same chains)
// Single thread, data in static buffers (warm caches: the same operands every iteration).
// With Eigen (find_package(Eigen3) found at configure time) the same products through
// Eigen::Map for comparison.
//
// Decoding (one token: y (N) = x (K)·W (K,N) + b) at (K, N) = (64,64), (64,256), (256,64),
// (128,512), (512,128), (64,65), each reporting GFLOPs = 2·K·N per product over the CPU time:
//   q8/<backend>/KxN          Q8_0 int8 weights, x already quantized (kernels/q8.hpp; the Q, K and
//                             V projections share one quantized x), every q8 backend compiled in
//   q8/quantize+matvec/KxN    the same with x quantized first (native backend)
//   float/gemv/KxN            the float decoder's matrix-vector product (kernels/gemv.hpp)
//   float/gemm_nn/1xNxK       the same through the GEMM entry point with M = 1
//
// bf16_gemm_<op>/256x256x256: the same products with bf16 operands (kernels/gemm_bf16.hpp), with
// pct_bf16_peak against the vdpbf16ps peak (tools/generate/peak.hpp) where the CPU has it.
//
// batched_products/stories15M/16: the weight products of a 16-stream decoder step at the
// stories15M shape, weights from memory (below). layer_products/stories15M/{in_place,panels}: a
// one-stream step's layer products, the matrices as stored or by panels (below).
//
// read_bandwidth/<KiB>: GB/s of reading a buffer of that size over and over (four independent
// vector sums, nothing written), the bound of token-by-token decoding, which reads every weight
// once per token: 400 KiB ≈ nano's float weights (from L2), 3100 KiB ≈ dim128's (past L2), 1016 KiB
// ≈ a stories260K-shaped model's, 16700 and 59344 KiB ≈ a stories15M-shaped model's int8 and float
// weights (from memory). read_bandwidth_thp/<KiB>: the same with the buffer advised for transparent
// huge pages (madvise(MADV_HUGEPAGE), as `staticformer run` advises its weights; Linux only).
// read_bandwidth_2chains/<KiB>, read_bandwidth_thp_2chains/<KiB>: the same with two vector sums
// (loads issued more slowly): from memory, on the Zen 4 VM this was measured on, either form was
// the faster one by up to a third, from run to run (59344 KiB, huge pages: 43-49 GB/s with two
// sums against 32-42 with four in one run, 32 against 43 in another). read_bandwidth_pf/<KiB>,
// read_bandwidth_thp_pf/<KiB>: four sums with every line asked for 8 KiB ahead (prefetcht0), as the
// AVX2 int8 products of weights from memory do (kernels/q8/avx2.hpp): on the Zen 3 VM those read a
// stories15M step's 17 MB from L3 faster than the plain kernels here did, so the bound must
// include it. read_bandwidth_4streams/<KiB>, read_bandwidth_thp_4streams/<KiB>: the buffer's four
// quarters read side by side, a line of each a step, as the decoder's one-row products read four
// panels of 16 columns side by side with AVX2 (kernels::gemv_panels): on the Zen 3 VM those read a
// stories15M token's weights faster than one stream does. read_bandwidth*_mem/<KiB>
// (where the decoder's backend for weights from memory, kernels::backend_for, is not the native
// one: 256-bit vectors on an AVX-512 target): the same four with that backend's loads. The
// roofline scripts (tools/bench_roofline.py) take the best of them all at each size.
#include <benchmark/benchmark.h>

#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <cstddef>
#include <cstdio>
#include <string>
#include <type_traits>
#include <utility>

#include "staticformer/kernels/gemm.hpp"
#include "staticformer/kernels/gemm_bf16.hpp"
#include "staticformer/kernels/gemv.hpp"
#include "staticformer/kernels/q8.hpp"
#include "staticformer/kernels/vmath.hpp"
#include "staticformer/kernels/weights_in.hpp"
#include "staticformer/simd.hpp"
#include "../tools/generate/peak.hpp"
#include "cpu_context.hpp"

#if defined(SF_BENCH_HAVE_EIGEN)
#include <Eigen/Core>
#endif

namespace {
using sf_bench::chains;
using sf_bench::chain_steps;
using sf_bench::cpu_seconds;
using sf_bench::fma_chains;
using sf_bench::opaque;
using sf_bench::peak_now;
using V = sf_bench::V;

double g_peak_gflops = 0;  // the best peak_fma measurement of this run

// ---------------------------------------------------------------- peak FMA throughput (peak.hpp)
void peak_fma(benchmark::State& state) {
  alignas(64) static typename V::reg st[chains];
  for (auto& r : st) r = V::set1(0.5f);
  const double flops = 2.0 * chains * V::width * chain_steps;
  const double t0 = cpu_seconds();
  for (auto _ : state) {
    fma_chains(st, chain_steps, std::make_index_sequence<chains>{});
    benchmark::ClobberMemory();
  }
  const double gflops = flops * static_cast<double>(state.iterations()) / (cpu_seconds() - t0) * 1e-9;
  if (gflops > g_peak_gflops) g_peak_gflops = gflops;
  state.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["pct_peak"] = 100.0;
  state.SetLabel(V::name);
}

// ---------------------------------------------------------------- products
enum class op { nn, nt, tn, nn_bias };
constexpr std::size_t cap = 256 * 256;
alignas(64) float A_[cap], B_[cap], C_[cap], bias_[256];

void fill() {
  static bool done = false;
  if (done) return;
  done = true;
  std::uint32_t s = 12345;
  auto rnd = [&s] { s = s * 1664525u + 1013904223u; return static_cast<float>(s >> 8) / 8388608.0f - 1.0f; };
  for (auto& x : A_) x = rnd();
  for (auto& x : B_) x = rnd();
  for (auto& x : C_) x = rnd();
  for (auto& x : bias_) x = rnd();
}

// Counters of a product benchmark: GFLOPs; pct_peak against the best peak_fma of the run;
// pct_peak_now against the peak measured right after this repetition (the clock of a shared
// machine drifts, and this ratio is the one least affected by it).
void report(benchmark::State& state, double flops_per_iter, double t0) {
  const double gflops = flops_per_iter * static_cast<double>(state.iterations()) / (cpu_seconds() - t0) * 1e-9;
  state.counters["GFLOPs"] = benchmark::Counter(flops_per_iter * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["pct_peak"] = g_peak_gflops > 0 ? 100.0 * gflops / g_peak_gflops : 0.0;
  state.counters["pct_peak_now"] = 100.0 * gflops / peak_now();
}

// C (M,N) (=|+=) op(A)·op(B) with the library's public entry points (native backend).
//   nn: A (M,K) lda, B (K,N) ldb;  nt: A (M,K) lda, B (N,K) ldb;  tn: A (K,M) lda, B (K,N) ldb;  C (M,N) ldc
// Bf16: the same product with bf16 operands (kernels/gemm_bf16.hpp), with pct_bf16_peak too.
template <op O, std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc,
          bool Acc = false, bool Bf16 = false>
void gemm(benchmark::State& state) {
  namespace k = sf::kernels;
  fill();
  const double t0 = cpu_seconds();
  for (auto _ : state) {
    if constexpr (Bf16) {
      if constexpr (O == op::nn) k::gemm_nn_bf16<M, N, K, lda, ldb, ldc, Acc>(C_, A_, B_);
      else if constexpr (O == op::nt) k::gemm_nt_bf16<M, N, K, lda, ldb, ldc, Acc>(C_, A_, B_);
      else k::gemm_tn_bf16<M, N, K, lda, ldb, ldc, Acc>(C_, A_, B_);
    } else {
      if constexpr (O == op::nn) k::gemm_nn<M, N, K, lda, ldb, ldc, Acc>(C_, A_, B_);
      else if constexpr (O == op::nn_bias) k::gemm_nn<M, N, K, lda, ldb, ldc, Acc>(C_, A_, B_, bias_);
      else if constexpr (O == op::nt) k::gemm_nt<M, N, K, lda, ldb, ldc, Acc>(C_, A_, B_);
      else k::gemm_tn<M, N, K, lda, ldb, ldc, Acc>(C_, A_, B_);
    }
    benchmark::DoNotOptimize(C_);
    benchmark::ClobberMemory();
  }
  const double seconds = cpu_seconds() - t0;
  report(state, 2.0 * M * N * K, t0);
  if constexpr (Bf16) {
    const double peak16 = sf_bench::bf16_peak_now();
    if (peak16 > 0)
      state.counters["pct_bf16_peak"] =
          100.0 * 2.0 * M * N * K * static_cast<double>(state.iterations()) / seconds * 1e-9 / peak16;
  }
}

#if defined(SF_BENCH_HAVE_EIGEN)
// The same products with Eigen (row-major maps over the same buffers, noalias, single thread).
template <op O, std::size_t M, std::size_t N, std::size_t K>
void eigen_gemm(benchmark::State& state) {
  fill();
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using CMap = Eigen::Map<const Mat>;
  Eigen::Map<Mat> C(C_, M, N);
  const CMap A(A_, O == op::tn ? K : M, O == op::tn ? M : K), B(B_, O == op::nt ? N : K, O == op::nt ? K : N);
  const double t0 = cpu_seconds();
  for (auto _ : state) {
    if constexpr (O == op::nn) C.noalias() = A * B;
    else if constexpr (O == op::nt) C.noalias() = A * B.transpose();
    else C.noalias() = A.transpose() * B;
    benchmark::DoNotOptimize(C_);
    benchmark::ClobberMemory();
  }
  report(state, 2.0 * M * N * K, t0);
}
#endif

// Softmax and GELU rows (elements per second).
template <std::size_t N>
void softmax_rows(benchmark::State& state) {  // 64 rows of N
  fill();
  for (auto _ : state) {
    for (std::size_t r = 0; r < 64; ++r) sf::simd::softmax_row<N>(C_ + r * N);
    benchmark::ClobberMemory();
    for (std::size_t i = 0; i < 64 * N; ++i) C_[i] = A_[i];  // fresh scores (counted in the time)
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 64 * N);
}
template <std::size_t N>
void gelu_tanh_rows(benchmark::State& state) {  // 64 rows of N
  fill();
  for (auto _ : state) {
    for (std::size_t r = 0; r < 64; ++r) sf::simd::gelu_tanh_row<N>(C_ + r * N, A_ + r * N);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 64 * N);
}

// ---------------------------------------------------------------- decoding: y (N) = x (K)·W (K,N) + b
// GFLOPs only (2·K·N per product): an int8 product is not an FMA, so no percentage of peak.
void report_matvec(benchmark::State& state, double flops_per_iter) {
  state.counters["GFLOPs"] = benchmark::Counter(flops_per_iter * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
template <std::size_t K, std::size_t N>
struct q8_data {  // W (K,N) = A_, x (K) = B_, b (N) = bias_
  static inline sf::kernels::q8::matrix<K, N> w;
  static inline sf::kernels::q8::vector<K> v;
  static void init() {
    fill();
    sf::kernels::q8::quantize(w, A_);
    sf::kernels::q8::quantize(v, B_);
  }
};
// x already quantized, backend B
template <class B, std::size_t K, std::size_t N>
void q8_matvec(benchmark::State& state) {
  using D = q8_data<K, N>;
  D::init();
  for (auto _ : state) {
    sf::kernels::q8::matvec_with<B>(C_, D::v, D::w, bias_);
    benchmark::DoNotOptimize(C_);
    benchmark::ClobberMemory();
  }
  report_matvec(state, 2.0 * K * N);
}
// x quantized, then the product (native backend)
template <std::size_t K, std::size_t N>
void q8_quantize_matvec(benchmark::State& state) {
  using D = q8_data<K, N>;
  D::init();
  for (auto _ : state) {
    sf::kernels::q8::quantize(D::v, B_);
    sf::kernels::q8::matvec(C_, D::v, D::w, bias_);
    benchmark::DoNotOptimize(C_);
    benchmark::ClobberMemory();
  }
  report_matvec(state, 2.0 * K * N);
}
template <std::size_t K, std::size_t N>
void float_gemv(benchmark::State& state) {
  fill();
  for (auto _ : state) {
    sf::kernels::gemv(C_, B_, A_, N, N, K, static_cast<const float*>(bias_));
    benchmark::DoNotOptimize(C_);
    benchmark::ClobberMemory();
  }
  report_matvec(state, 2.0 * K * N);
}
template <std::size_t K, std::size_t N>
void float_gemm_row(benchmark::State& state) {
  fill();
  for (auto _ : state) {
    sf::kernels::gemm_nn<1, N, K>(C_, B_, A_, bias_);
    benchmark::DoNotOptimize(C_);
    benchmark::ClobberMemory();
  }
  report_matvec(state, 2.0 * K * N);
}
template <class B, std::size_t K, std::size_t N>
void add_q8_backend(const std::string& shape) {
  benchmark::RegisterBenchmark((std::string("q8/") + B::name + "/" + shape).c_str(), q8_matvec<B, K, N>);
}
template <std::size_t K, std::size_t N>
void add_decode() {
  namespace q8 = sf::kernels::q8;
  const std::string shape = std::to_string(K) + "x" + std::to_string(N);
  add_q8_backend<q8::scalar, K, N>(shape);
#if defined(SF_Q8_HAVE_AVX2)
  add_q8_backend<q8::avx2, K, N>(shape);
#endif
#if defined(SF_Q8_HAVE_AVX_VNNI)
  add_q8_backend<q8::avx_vnni, K, N>(shape);
#endif
#if defined(SF_Q8_HAVE_AVX512BW)
  add_q8_backend<q8::avx512bw, K, N>(shape);
#endif
#if defined(SF_Q8_HAVE_AVX512_VNNI)
  add_q8_backend<q8::avx512_vnni, K, N>(shape);
#endif
#if defined(SF_Q8_HAVE_NEON)
  add_q8_backend<q8::neon, K, N>(shape);
#endif
#if defined(SF_Q8_HAVE_NEON_DOT)
  add_q8_backend<q8::neon_dot, K, N>(shape);
#endif
  benchmark::RegisterBenchmark(("q8/quantize+matvec/" + shape).c_str(), q8_quantize_matvec<K, N>);
  benchmark::RegisterBenchmark(("float/gemv/" + shape).c_str(), float_gemv<K, N>);
  benchmark::RegisterBenchmark(("float/gemm_nn/1x" + std::to_string(N) + "x" + std::to_string(K)).c_str(),
                               float_gemm_row<K, N>);
}

template <op O, std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb, std::size_t ldc,
          bool Acc = false>
void add(const std::string& name) {
  benchmark::RegisterBenchmark(name.c_str(), gemm<O, M, N, K, lda, ldb, ldc, Acc>);
}
template <op O, std::size_t M, std::size_t N, std::size_t K>
void add_cube(const char* opname) {
  constexpr std::size_t lda = O == op::tn ? M : K, ldb = O == op::nt ? K : N;
  add<O, M, N, K, lda, ldb, N>(std::string("gemm_") + opname + "/" + std::to_string(M) + "x" + std::to_string(N) +
                               "x" + std::to_string(K));
#if defined(SF_BENCH_HAVE_EIGEN)
  benchmark::RegisterBenchmark((std::string("eigen_") + opname + "/" + std::to_string(M) + "x" + std::to_string(N) +
                                "x" + std::to_string(K)).c_str(),
                               eigen_gemm<O, M, N, K>);
#endif
}

// ---------------------------------------------------------------- memory read bandwidth
// Two buffers of 64 MiB aligned to 2 MiB: one with the default pages, one advised for huge pages
// before it is first written (read_bandwidth_thp).
constexpr std::size_t max_kib = 65536;
alignas(2 * 1024 * 1024) float g_buf4k[max_kib * 1024 / sizeof(float)];
alignas(2 * 1024 * 1024) float g_bufthp[max_kib * 1024 / sizeof(float)];

template <bool Thp, int Chains, class B = V, bool Prefetch = false, int Streams = 1>
void read_bandwidth(benchmark::State& state) {
  static_assert(Chains == 2 || Chains == 4);
  static_assert(!Prefetch || Chains == 4);
  static_assert(Streams == 1 || (Streams == 4 && Chains == 4 && !Prefetch));
  constexpr std::size_t ahead = 8192 / sizeof(float);  // Prefetch: every line asked for 8 KiB ahead
  using R = typename B::reg;
  constexpr std::size_t W = B::width;
  float* buf = Thp ? g_bufthp : g_buf4k;
  const std::size_t n = static_cast<std::size_t>(state.range(0)) * 1024 / sizeof(float);
#if defined(__linux__)
  static const bool advised = ::madvise(g_bufthp, sizeof g_bufthp, MADV_HUGEPAGE) == 0;  // (before any write)
  if (Thp && !advised) state.SkipWithError("madvise(MADV_HUGEPAGE) failed");
#endif
  for (std::size_t i = 0; i < n; ++i) buf[i] = 1.0f;
  R s0 = B::zero(), s1 = B::zero(), s2 = B::zero(), s3 = B::zero();
  const double t0 = cpu_seconds();
  for (auto _ : state) {
    if constexpr (Streams == 4) {  // the buffer's four quarters side by side, two vectors of each a step
      const std::size_t q = n / 4 / (2 * W) * (2 * W);
      const float *q0 = buf, *q1 = buf + q, *q2 = buf + 2 * q, *q3 = buf + 3 * q;
      for (std::size_t i = 0; i < q; i += 2 * W) {
        s0 = B::add(s0, B::load(q0 + i));
        s1 = B::add(s1, B::load(q0 + i + W));
        s2 = B::add(s2, B::load(q1 + i));
        s3 = B::add(s3, B::load(q1 + i + W));
        s0 = B::add(s0, B::load(q2 + i));
        s1 = B::add(s1, B::load(q2 + i + W));
        s2 = B::add(s2, B::load(q3 + i));
        s3 = B::add(s3, B::load(q3 + i + W));
      }
    } else if constexpr (Chains == 4) {
      for (std::size_t i = 0; i + 4 * W <= n; i += 4 * W) {
        if constexpr (Prefetch) {  // (within the buffer: max_kib is past every size benchmarked)
          for (std::size_t j = 0; j < 4 * W; j += 64 / sizeof(float))
            if (i + ahead + j < sizeof g_buf4k / sizeof(float)) __builtin_prefetch(buf + i + ahead + j);
        }
        s0 = B::add(s0, B::load(buf + i));
        s1 = B::add(s1, B::load(buf + i + W));
        s2 = B::add(s2, B::load(buf + i + 2 * W));
        s3 = B::add(s3, B::load(buf + i + 3 * W));
      }
    } else {
      for (std::size_t i = 0; i + 2 * W <= n; i += 2 * W) {
        s0 = B::add(s0, B::load(buf + i));
        s1 = B::add(s1, B::load(buf + i + W));
      }
    }
    opaque(s0), opaque(s1), opaque(s2), opaque(s3);
  }
  const double bytes = static_cast<double>((Streams == 4 ? n / 4 / (2 * W) * (2 * W) * 4 : n) * sizeof(float));
  state.counters["GB/s"] = bytes * static_cast<double>(state.iterations()) / (cpu_seconds() - t0) * 1e-9;
}

// The first n floats of the huge-page buffer as weights: advised (as read_bandwidth_thp: before
// any write, if first) and filled.
float* thp_weights(std::size_t n) {
#if defined(__linux__)
  ::madvise(g_bufthp, sizeof g_bufthp, MADV_HUGEPAGE);
#endif
  for (std::size_t i = 0; i < n; ++i) g_bufthp[i] = static_cast<float>(i % 97) * 1e-3f - 0.05f;
  return g_bufthp;
}

// ---------------------------------------------------------------- a batched decoder step's products
// batched_products/stories15M/16: the weight products of one decoder step of 16 streams at the
// stories15M shape (D 288, F 768, 6 layers, vocabulary 32000, tied head), the weights from memory
// (58 MiB in the huge-page buffer, as sf::decoder reads its copies: every matrix by panels of
// kernels::tile_panel_width columns, kernels::gemm_nn_panels): per layer q, k, v and o
// (16,288)·(288,288), the gate and up (16,288)·(288,768), the down (16,768)·(768,288); then the
// head (16,288)·(288,32000). GFLOPs and pct_peak as for the products above. The rest of a step (attention over each
// stream's cache, norms, sampling) is not here: `staticformer bench --decode` times whole steps.
void batched_products(benchmark::State& state) {
  namespace k = sf::kernels;
  constexpr std::size_t R = 16, D = 288, F = 768, L = 6, NV = 32000;
  constexpr std::size_t HN = k::tile_panel_width<float>;  // the decoder's panels for weights from memory
  constexpr std::size_t layer = 4 * D * D + 3 * D * F, weights = L * layer + D * NV;
  static_assert(weights <= sizeof g_bufthp / sizeof(float), "batched_products: the weights exceed the buffer");
  float* const w = thp_weights(weights);
  static float x[R * F], y[R * F], logits[R * NV];
  for (std::size_t i = 0; i < R * F; ++i) x[i] = static_cast<float>(i % 13) * 0.1f - 0.6f;
  const double t0 = cpu_seconds();
  for (auto _ : state) {
    const float* p = w;
    for (std::size_t l = 0; l < L; ++l) {
      for (int m = 0; m < 4; ++m, p += D * D) k::gemm_nn_panels<R, D, D, HN>(y, x, p);  // q, k, v, o
      k::gemm_nn_panels<R, F, D, HN>(y, x, p), p += D * F;                               // gate
      k::gemm_nn_panels<R, F, D, HN>(y, x, p), p += D * F;                               // up
      k::gemm_nn_panels<R, D, F, HN>(y, x, p), p += D * F;                               // down
    }
    k::gemm_nn_panels<R, NV, D, HN>(logits, x, p);  // the head
    benchmark::DoNotOptimize(logits);
    benchmark::ClobberMemory();
  }
  report(state, 2.0 * R * static_cast<double>(weights), t0);
}

// layer_products/stories15M/{in_place,panels}: the one-row products of a stories15M decoder step's
// six layers (q, k, v, o (288,288), gate and up (288,768), down (768,288): 23.9 MB in the huge-page
// buffer), weights from memory as sf::decoder reads them: in_place, each matrix as stored
// (kernels::gemv<weights_in::memory>: row after row with y in L1); panels, each stored by panels
// (kernels::gemv_panels, as the decoder's copy of the blocks, decoder_options::panel_copy: panels
// of kernels::tile_panel_width columns, a few side by side, the sums in registers). The same sums.
// GB/s of weights read.
template <bool Panels>
void layer_products(benchmark::State& state) {
  namespace k = sf::kernels;
  constexpr std::size_t D = 288, F = 768, L = 6;
  constexpr std::size_t layer = 4 * D * D + 3 * D * F, weights = L * layer;
  static_assert(weights <= sizeof g_bufthp / sizeof(float), "layer_products: the weights exceed the buffer");
  float* const w = thp_weights(weights);
  static float x[F], y[F];
  for (std::size_t i = 0; i < F; ++i) x[i] = static_cast<float>(i % 13) * 0.1f - 0.6f;
  auto product = [](const float* m, std::size_t K, std::size_t N) {
    if constexpr (Panels) k::gemv_panels<k::weights_in::memory, k::tile_panel_width<float>>(y, x, m, N, K);
    else k::gemv<k::weights_in::memory>(y, x, m, N, N, K);
  };
  const double t0 = cpu_seconds();
  for (auto _ : state) {
    const float* p = w;
    for (std::size_t l = 0; l < L; ++l) {
      for (int m = 0; m < 4; ++m, p += D * D) product(p, D, D);  // q, k, v, o
      product(p, D, F), p += D * F;                                // gate
      product(p + D * F, D, F);                                    // up (stored after the down)
      product(p, F, D), p += 2 * D * F;                            // down
    }
    benchmark::DoNotOptimize(y);
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] = sizeof(float) * static_cast<double>(weights) * static_cast<double>(state.iterations()) /
                           (cpu_seconds() - t0) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark((std::string("peak_fma/") + V::name).c_str(), peak_fma);
  // cubes: name gemm_<op>/MxNxK (C is M×N, K the inner dimension)
  add_cube<op::nn, 64, 64, 64>("nn");
  add_cube<op::nn, 128, 128, 128>("nn");
  add_cube<op::nn, 256, 256, 256>("nn");
  add_cube<op::nt, 64, 64, 64>("nt");
  add_cube<op::nt, 128, 128, 128>("nt");
  add_cube<op::nt, 256, 256, 256>("nt");
  add_cube<op::tn, 64, 64, 64>("tn");
  add_cube<op::tn, 128, 128, 128>("tn");
  add_cube<op::tn, 256, 256, 256>("tn");
  // the same cubes with bf16 operands, float32 sums: bf16_gemm_<op>/MxNxK
  benchmark::RegisterBenchmark("bf16_gemm_nn/256x256x256", gemm<op::nn, 256, 256, 256, 256, 256, 256, false, true>);
  benchmark::RegisterBenchmark("bf16_gemm_nt/256x256x256", gemm<op::nt, 256, 256, 256, 256, 256, 256, false, true>);
  benchmark::RegisterBenchmark("bf16_gemm_tn/256x256x256", gemm<op::tn, 256, 256, 256, 256, 256, 256, false, true>);
  // model shapes
  add<op::nn_bias, 256, 256, 64, 64, 256, 256>("model/XW+b (256x64)(64x256)");      // Y = X·W + b, D → 4D
  add<op::nn, 256, 64, 256, 256, 64, 64>("model/XW (256x256)(256x64)");              // FFN down, 4D → D
  add<op::nt, 256, 64, 256, 256, 256, 64>("model/dX=dY.Wt (256x256)(64x256)t");      // dX = dY·Wᵀ
  add<op::tn, 64, 256, 256, 64, 256, 256, true>("model/dW+=Xt.dY (256x64)t(256x256)");  // dW += Xᵀ·dY
  add<op::nt, 64, 64, 16, 64, 64, 64>("model/S=QKt head (T=64,dk=16,D=64)");          // per head, lda = ldb = D
  add<op::nn, 64, 16, 64, 64, 64, 64>("model/O=PV head (T=64,dk=16,D=64)");           // ldb = ldc = D
  add<op::tn, 64, 16, 64, 64, 64, 64, true>("model/dV+=PtdO head (T=64,dk=16)");
  // decoding, one token: y (N) = x (K)·W (K,N) + b, name <kind>/KxN
  add_decode<64, 64>();
  add_decode<64, 256>();
  add_decode<256, 64>();
  add_decode<128, 512>();
  add_decode<512, 128>();
  add_decode<64, 65>();
  benchmark::RegisterBenchmark("vmath/softmax_row<64> x64", softmax_rows<64>);
  benchmark::RegisterBenchmark("vmath/gelu_tanh_row<256> x64", gelu_tanh_rows<256>);
  for (int kib : {32, 400, 1016, 3100, 8192, 16700, 59344}) {
    const std::string k = std::to_string(kib);
    benchmark::RegisterBenchmark(("read_bandwidth/" + k).c_str(), read_bandwidth<false, 4>)->Arg(kib);
    benchmark::RegisterBenchmark(("read_bandwidth_thp/" + k).c_str(), read_bandwidth<true, 4>)->Arg(kib);
    benchmark::RegisterBenchmark(("read_bandwidth_2chains/" + k).c_str(), read_bandwidth<false, 2>)->Arg(kib);
    benchmark::RegisterBenchmark(("read_bandwidth_thp_2chains/" + k).c_str(), read_bandwidth<true, 2>)->Arg(kib);
    benchmark::RegisterBenchmark(("read_bandwidth_pf/" + k).c_str(), read_bandwidth<false, 4, V, true>)->Arg(kib);
    benchmark::RegisterBenchmark(("read_bandwidth_thp_pf/" + k).c_str(), read_bandwidth<true, 4, V, true>)->Arg(kib);
    benchmark::RegisterBenchmark(("read_bandwidth_4streams/" + k).c_str(), read_bandwidth<false, 4, V, false, 4>)->Arg(kib);
    benchmark::RegisterBenchmark(("read_bandwidth_thp_4streams/" + k).c_str(), read_bandwidth<true, 4, V, false, 4>)->Arg(kib);
    using M = sf::kernels::backend_for<float, sf::kernels::weights_in::memory>;  // the decoder's, from memory
    if constexpr (!std::is_same_v<M, V>) {
      benchmark::RegisterBenchmark(("read_bandwidth_mem/" + k).c_str(), read_bandwidth<false, 4, M>)->Arg(kib);
      benchmark::RegisterBenchmark(("read_bandwidth_thp_mem/" + k).c_str(), read_bandwidth<true, 4, M>)->Arg(kib);
      benchmark::RegisterBenchmark(("read_bandwidth_2chains_mem/" + k).c_str(), read_bandwidth<false, 2, M>)->Arg(kib);
      benchmark::RegisterBenchmark(("read_bandwidth_thp_2chains_mem/" + k).c_str(), read_bandwidth<true, 2, M>)->Arg(kib);
    }
  }
  benchmark::RegisterBenchmark("batched_products/stories15M/16", batched_products)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("layer_products/stories15M/in_place", layer_products<false>)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("layer_products/stories15M/panels", layer_products<true>)->Unit(benchmark::kMillisecond);
  sf_bench::add_cpu_context(/*bf16_rows=*/true);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::printf("peak_fma (best in this run): %.1f GFLOP/s, backend %s; q8 native backend %s\n", g_peak_gflops, V::name,
              sf::kernels::q8::native::name);
  return 0;
}
