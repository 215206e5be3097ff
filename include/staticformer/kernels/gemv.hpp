// staticformer/kernels/gemv.hpp — the vector–matrix product of token-by-token decoding.
//
//   y (N) = x (K) · B (K,N) (+ bias (N))        y[n] = bias[n] + Σ_k x[k]·B[k,n]
//
// Summed exactly as a row of the GEMM tiles (gemm.hpp) and the naive reference (gemm_ref.hpp):
// per element, from 0 (+ bias), in k order, one fused multiply-add at a time. So a decoder
// step that uses this kernel gives the same bits as sf::infer's matrix products over the
// same prefix — that is what makes incremental decoding *exact*, not merely close.
//
// How it runs: B is streamed once, row k after row k. A panel of up to `panel_vectors<V>`
// vectors of y stays in registers for the whole K loop: per k, x[k] is broadcast and one FMA
// per vector updates the panel. N, K and the row stride are run-time values (the attention of
// a decoder step has a key count that grows with the position), so one compiled panel serves
// every shape. The scalar backend is the reference and the constant-evaluation path.
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>

#include "staticformer/cpu.hpp"
#include "staticformer/kernels/attributes.hpp"
#include "staticformer/kernels/weights_in.hpp"
#include "staticformer/simd.hpp"

namespace sf::kernels {

namespace detail {
// Vectors of y kept in registers by one panel (at most: gemv_with balances the panels of a row).
template <class V> inline constexpr std::size_t panel_vectors = V::width == 1 ? 8 : (V::registers >= 32 ? 24 : 8);

// y[0:cols] = (bias) + Σ_k x[k]·B[k, 0:cols]   for NV vectors, the last one with nl lanes when Partial,
// in G panels side by side (G = 1: one panel): vector j is vector j % (NV/G) of panel j / (NV/G),
// and each panel starts ps values after the one before (G streams read together, NV sums in registers)
//   y: (cols)   x: (K)   B: G panels of (K, NV/G·W) row stride ldb, ps apart   bias: (cols) or nullptr
template <class V, std::size_t NV, bool Partial, std::size_t G, class T, std::size_t... J>
SF_KERNEL_INLINE void gemv_panel_body(std::index_sequence<J...>, T* SF_RESTRICT y, const T* SF_RESTRICT x,
                                      const T* SF_RESTRICT B, std::size_t ldb, std::size_t K, std::size_t nl,
                                      const T* SF_RESTRICT bias, std::size_t ps) {
  static_assert(G >= 1 && NV % G == 0 && (G == 1 || !Partial), "sf::kernels::gemv_panel: G panels of NV / G vectors");
  using reg = typename V::reg;
  constexpr std::size_t W = V::width, NVp = NV / G;
  auto ld = [nl](const T* p, std::size_t j) SF_LAMBDA_INLINE {  // the vector at p, vector j of the NV
    return Partial && j + 1 == NV ? V::load_partial(p, nl) : V::load(p);
  };
  reg acc[NV] = {((void)J, V::zero())...};
  if (bias) ((acc[J] = V::add(acc[J], ld(bias + J * W, J))), ...);  // as the tiles: 0 + bias
  for (std::size_t k = 0; k < K; ++k) {  // acc[j] += x[k] · B[k, jW:jW+W]
    const reg xk = V::set1(x[k]);
    const T* b = B + k * ldb;
    ((acc[J] = V::fmadd(xk, ld(b + (J / NVp) * ps + (J % NVp) * W, J), acc[J])), ...);
  }
  ((Partial && J + 1 == NV ? V::store_partial(y + J * W, acc[J], nl) : V::store(y + J * W, acc[J])), ...);
}
template <class V, std::size_t NV, bool Partial, std::size_t G = 1, class T>
SF_KERNEL_NOINLINE void gemv_panel(T* SF_RESTRICT y, const T* SF_RESTRICT x, const T* SF_RESTRICT B,
                                   std::size_t ldb, std::size_t K, std::size_t nl, const T* SF_RESTRICT bias,
                                   std::size_t ps = 0) {
  gemv_panel_body<V, NV, Partial, G>(std::make_index_sequence<NV>{}, y, x, B, ldb, K, nl, bias, ps);
}

// The panel for the last `nv` vectors (1 ≤ nv ≤ panel_vectors), partial or not, chosen at run time.
template <class V, class T, std::size_t... I>
SF_KERNEL_INLINE void gemv_tail(std::index_sequence<I...>, std::size_t nv, bool partial, T* y, const T* x,
                                const T* B, std::size_t ldb, std::size_t K, std::size_t nl, const T* bias) {
  ((nv == I + 1 ? (partial ? gemv_panel<V, I + 1, true>(y, x, B, ldb, K, nl, bias)
                           : gemv_panel<V, I + 1, false>(y, x, B, ldb, K, nl, bias))
                : void()),
   ...);
}
}  // namespace detail

namespace detail {
// A matrix whose rows need more than one panel and which holds at least this many bytes is read
// row after row (gemv_stream): it is unlikely to sit in L1/L2 between two uses (a 1 MiB L2 holds
// four), and from L3 or memory one stream is what the prefetchers follow (below).
inline constexpr std::size_t stream_bytes = std::size_t{256} * 1024;

// y[0:N] = (0 + bias) + Σ_k x[k]·B[k, 0:N], row after row: y stays in L1 and every row k of B
// updates all of it, y[n] = fma(x[k], B[k,n], y[n]), so B is read in address order, one stream.
// Per element the same sums as the panels (from 0 + bias, k order, one FMA at a time): the same
// bits. Panels of a matrix wider than one panel read the rows' slices a row stride apart, a stream
// per panel with gaps; on the Zen 4 this was measured on (a (288, 768) matrix from memory: 13 GB/s
// by panels, 37 GB/s row after row; one panel's (288, 288): 40 GB/s) the prefetchers do not follow
// them. In L1/L2 the panels are faster (y is loaded and stored for every FMA here): 102 against 85
// GB/s for (288, 768), hence stream_bytes.
//   y: (N)   x: (K)   B: (K,N) row stride ldb   bias: (N) or nullptr
template <class V, class T>
SF_KERNEL_NOINLINE void gemv_stream(T* SF_RESTRICT y, const T* SF_RESTRICT x, const T* SF_RESTRICT B,
                                    std::size_t ldb, std::size_t N, std::size_t K, const T* SF_RESTRICT bias) {
  constexpr std::size_t W = V::width;
  const std::size_t full = N / W * W, nl = N - full;
  for (std::size_t n = 0; n < full; n += W) V::store(y + n, bias ? V::add(V::zero(), V::load(bias + n)) : V::zero());
  if (nl) V::store_partial(y + full, bias ? V::add(V::zero(), V::load_partial(bias + full, nl)) : V::zero(), nl);
  for (std::size_t k = 0; k < K; ++k) {  // y[0:N] = fma(x[k], B[k, 0:N], y[0:N])
    const auto xk = V::set1(x[k]);
    const T* b = B + k * ldb;
    std::size_t n = 0;
    for (; n + 4 * W <= full; n += 4 * W) {
      const auto y0 = V::fmadd(xk, V::load(b + n), V::load(y + n));
      const auto y1 = V::fmadd(xk, V::load(b + n + W), V::load(y + n + W));
      const auto y2 = V::fmadd(xk, V::load(b + n + 2 * W), V::load(y + n + 2 * W));
      const auto y3 = V::fmadd(xk, V::load(b + n + 3 * W), V::load(y + n + 3 * W));
      V::store(y + n, y0), V::store(y + n + W, y1), V::store(y + n + 2 * W, y2), V::store(y + n + 3 * W, y3);
    }
    for (; n < full; n += W) V::store(y + n, V::fmadd(xk, V::load(b + n), V::load(y + n)));
    if (nl) V::store_partial(y + full, V::fmadd(xk, V::load_partial(b + full, nl), V::load_partial(y + full, nl)), nl);
  }
}
}  // namespace detail

// y (N) = x (K) · B (K,N) (+ bias)   with backend V; N, K, ldb at run time.
//   y: (N)   x: (K)   B: (K,N) row stride ldb ≥ N   bias: (N) or nullptr
// Naive reference: ref::gemv (below) — the same sums in the same order.
// The columns are cut into as few panels as fit in registers, of equal widths (a row of 288 floats
// is one panel of 18 AVX-512 vectors, 768 two of 24): a matrix whose rows fit one panel is read
// as one stream, row after row, as a matrix from memory should be. A wider matrix of at least
// detail::stream_bytes is read row after row with y in L1 instead (detail::gemv_stream).
template <class V, class T>
void gemv_with(T* y, const T* x, const T* B, std::size_t ldb, std::size_t N, std::size_t K, const T* bias) {
  constexpr std::size_t W = V::width, NV = detail::panel_vectors<V>;
  const std::size_t vecs = (N + W - 1) / W, panels = (vecs + NV - 1) / NV, per = (vecs + panels - 1) / panels;
  if constexpr (W > 1) {
    if (panels > 1 && K * N * sizeof(T) >= detail::stream_bytes) {
      detail::gemv_stream<V>(y, x, B, ldb, N, K, bias);
      return;
    }
  }
  for (std::size_t n0 = 0; n0 < N; n0 += per * W) {
    const std::size_t rem = N - n0 < per * W ? N - n0 : per * W, nv = (rem + W - 1) / W, nl = rem - (nv - 1) * W;
    if (nv == NV && nl == W)
      detail::gemv_panel<V, NV, false>(y + n0, x, B + n0, ldb, K, W, bias ? bias + n0 : nullptr);
    else
      detail::gemv_tail<V>(std::make_index_sequence<NV>{}, nv, nl != W, y + n0, x, B + n0, ldb, K, nl,
                           bias ? bias + n0 : nullptr);
  }
}

// ---------------------------------------------------------------- several products at once
// Independent products y_g = x_g · B_g (+ bias_g) of the same N, K and row stride, run G at a
// time in one loop, so G·NV accumulation chains are in flight instead of NV: the Q, K and V of
// one position (same x), or the H heads of one query's attention (q_h·K_hᵀ, P_h·V_h). Each y_g
// is summed exactly as gemv sums it (k order, one FMA at a time, from 0 + bias).
template <class T>
struct gemv_job {
  T* y;             // (N)
  const T* x;       // (K)
  const T* B;       // (K, N) row stride ldb
  const T* bias;    // (N) or nullptr
};

namespace detail {
template <class V> inline constexpr std::size_t batch_chains = V::width == 1 ? 8 : (V::registers >= 32 ? 24 : 12);
// vectors per job in a pass of G jobs; 8 jobs (32 registers only) keep 2 each: 16 accumulators
// and 8 broadcast x values; 6 jobs keep 3 each (18 and 6)
template <class V, std::size_t G> inline constexpr std::size_t batch_vectors =
    G == 6 ? 3 : G > 4 ? 2 : batch_chains<V> / G < panel_vectors<V> ? batch_chains<V> / G : panel_vectors<V>;

// jobs[0:G]: y_g[n0 : n0+cols] over NV vectors (the last with nl lanes when Partial). Jobs
// g, g+1, … g+S-1 (g a multiple of S) share one matrix B: it is loaded once for them.
template <class V, std::size_t G, std::size_t S, std::size_t NV, bool Partial, class T, std::size_t... I>
SF_KERNEL_INLINE void gemv_batch_body(std::index_sequence<I...>, const gemv_job<T>* jobs, std::size_t n0,
                                      std::size_t ldb, std::size_t K, std::size_t nl) {
  using reg = typename V::reg;
  constexpr std::size_t W = V::width;
  auto ld = [nl](const T* p, std::size_t j) SF_LAMBDA_INLINE {
    return Partial && j + 1 == NV ? V::load_partial(p + j * W, nl) : V::load(p + j * W);
  };
  reg acc[G * NV] = {((void)I, V::zero())...};  // acc[g·NV + j]
  ((jobs[I / NV].bias ? (void)(acc[I] = V::add(acc[I], ld(jobs[I / NV].bias + n0, I % NV))) : void()), ...);
  for (std::size_t k = 0; k < K; ++k) {
    reg xk[G];
    simd::detail::repeat<G>([&](auto g) SF_LAMBDA_INLINE { xk[g] = V::set1(jobs[g].x[k]); });
    if constexpr (S == 1) {
      ((acc[I] = V::fmadd(xk[I / NV], ld(jobs[I / NV].B + k * ldb + n0, I % NV), acc[I])), ...);
    } else {  // one load of B's row k per S jobs
      reg bk[(G / S) * NV];
      simd::detail::repeat<(G / S) * NV>(
          [&](auto i) SF_LAMBDA_INLINE { bk[i] = ld(jobs[i / NV * S].B + k * ldb + n0, i % NV); });
      ((acc[I] = V::fmadd(xk[I / NV], bk[(I / NV / S) * NV + I % NV], acc[I])), ...);
    }
  }
  ((Partial && I % NV + 1 == NV ? V::store_partial(jobs[I / NV].y + n0 + (I % NV) * W, acc[I], nl)
                               : V::store(jobs[I / NV].y + n0 + (I % NV) * W, acc[I])),
   ...);
}
template <class V, std::size_t G, std::size_t S, std::size_t NV, bool Partial, class T>
SF_KERNEL_NOINLINE void gemv_batch_panel(const gemv_job<T>* jobs, std::size_t n0, std::size_t ldb, std::size_t K,
                                         std::size_t nl) {
  gemv_batch_body<V, G, S, NV, Partial>(std::make_index_sequence<G * NV>{}, jobs, n0, ldb, K, nl);
}
template <class V, std::size_t G, std::size_t S, class T, std::size_t... I>
SF_KERNEL_INLINE void gemv_batch_tail(std::index_sequence<I...>, std::size_t nv, bool partial,
                                      const gemv_job<T>* jobs, std::size_t n0, std::size_t ldb, std::size_t K,
                                      std::size_t nl) {
  ((nv == I + 1 ? (partial ? gemv_batch_panel<V, G, S, I + 1, true>(jobs, n0, ldb, K, nl)
                           : gemv_batch_panel<V, G, S, I + 1, false>(jobs, n0, ldb, K, nl))
                : void()),
   ...);
}
// G jobs (1 ≤ G ≤ 8), all columns; consecutive S share B (S divides G)
template <class V, std::size_t G, std::size_t S, class T>
void gemv_batch_group(const gemv_job<T>* jobs, std::size_t ldb, std::size_t N, std::size_t K) {
  constexpr std::size_t W = V::width, NV = batch_vectors<V, G>, NR = NV * W;
  std::size_t n0 = 0;
  for (; n0 + NR <= N; n0 += NR) gemv_batch_panel<V, G, S, NV, false>(jobs, n0, ldb, K, W);
  if (n0 < N) {
    const std::size_t rem = N - n0, nv = (rem + W - 1) / W, nl = rem - (nv - 1) * W;
    gemv_batch_tail<V, G, S>(std::make_index_sequence<NV>{}, nv, nl != W, jobs, n0, ldb, K, nl);
  }
}
}  // namespace detail

// jobs[0:n]: y_g = x_g · B_g (+ bias_g), all (K, N) with row stride ldb, with backend V.
// Share = S > 1: jobs g … g+S-1 (g a multiple of S, n a multiple of S) have the same B (the query
// heads of one key/value head in grouped-query attention); each row of it is then loaded once for
// them. With 32 registers and N of at most 2 vectors, 8 jobs run in one pass (8 chains: a P·V of
// d_k = 8 columns is one vector per head, latency-bound with fewer chains). The same sums.
template <class V, std::size_t Share = 1, class T>
void gemv_batch_with(const gemv_job<T>* jobs, std::size_t n, std::size_t ldb, std::size_t N, std::size_t K) {
  if constexpr (V::width == 1) {  // scalar (e.g. a Cortex-M4): one product after the other keeps
    for (std::size_t g = 0; g < n; ++g)  // 8 accumulators and one base pointer per loop (fewer instructions)
      gemv_with<V>(jobs[g].y, jobs[g].x, jobs[g].B, ldb, N, K, jobs[g].bias);
  } else {
    std::size_t g = 0;
    [[maybe_unused]] const bool eight = V::registers >= 32 && N <= 2 * V::width;  // passes of 8 jobs
    if constexpr (Share == 2 || Share == 4 || Share == 8) {  // whole sharing sets per pass
      if constexpr (V::registers >= 32)
        if (eight)
          for (; g + 8 <= n; g += 8) detail::gemv_batch_group<V, 8, Share>(jobs + g, ldb, N, K);
      if constexpr (Share <= 4)
        for (; g + 4 <= n; g += 4) detail::gemv_batch_group<V, 4, Share>(jobs + g, ldb, N, K);
      if constexpr (Share == 2) {
        if (g + 2 <= n) {
          detail::gemv_batch_group<V, 2, 2>(jobs + g, ldb, N, K);
          g += 2;
        }
      }
    }
    // the rest (or every job, Share = 1 or another group size): no sharing assumed
    if constexpr (V::registers >= 32) {
      if (eight)
        for (; g + 8 <= n; g += 8) detail::gemv_batch_group<V, 8, 1>(jobs + g, ldb, N, K);
      else if (N <= 3 * V::width)  // (six heads' P·V of d_k = 48: rows of V read once, in one pass)
        for (; g + 6 <= n; g += 6) detail::gemv_batch_group<V, 6, 1>(jobs + g, ldb, N, K);
    }
    for (; g + 4 <= n; g += 4) detail::gemv_batch_group<V, 4, 1>(jobs + g, ldb, N, K);
    if (n - g == 3) detail::gemv_batch_group<V, 3, 1>(jobs + g, ldb, N, K);
    else if (n - g == 2) detail::gemv_batch_group<V, 2, 1>(jobs + g, ldb, N, K);
    else if (n - g == 1) detail::gemv_batch_group<V, 1, 1>(jobs + g, ldb, N, K);
  }
}

namespace ref {
// y[n] = (0 + bias[n]) + Σ_k x[k]·B[k·ldb + n], one fused multiply-add at a time in k order.
template <class T>
constexpr void gemv(T* y, const T* x, const T* B, std::size_t ldb, std::size_t N, std::size_t K, const T* bias) {
  using S = simd::scalar<T>;
  for (std::size_t n = 0; n < N; ++n) {
    T s = S::zero();
    if (bias) s = S::add(s, bias[n]);
    for (std::size_t k = 0; k < K; ++k) s = S::fmadd(x[k], B[k * ldb + n], s);
    y[n] = s;
  }
}

// jobs[0:n], each summed as ref::gemv.
template <class T>
constexpr void gemv_batch(const gemv_job<T>* jobs, std::size_t n, std::size_t ldb, std::size_t N, std::size_t K) {
  for (std::size_t g = 0; g < n; ++g) gemv(jobs[g].y, jobs[g].x, jobs[g].B, ldb, N, K, jobs[g].bias);
}
}  // namespace ref

// y[n] = Σ_k x[k]·A[n·lda + k]: the vector–matrix product with the matrix stored transposed
// (A: (N, K), e.g. a tied embedding read in place as the LM head), each y[n] summed from 0 in k
// order one FMA at a time, so the same bits as gemv over Aᵀ. Four chains (rows) at a time, scalar: for
// targets where RAM for a transposed copy matters more than speed (sf::small_ram decoders).
//   y: (N)   x: (K)   A: (N, K) row stride lda ≥ K
template <class T>
constexpr void gemv_rows(T* y, const T* x, const T* A, std::size_t lda, std::size_t N, std::size_t K) {
  using S = simd::scalar<T>;
  std::size_t n = 0;
  for (; n + 4 <= N; n += 4) {  // four rows at a time: each x[k] loaded once for four chains
    const T *a0 = A + n * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
    T s0 = S::zero(), s1 = S::zero(), s2 = S::zero(), s3 = S::zero();
    for (std::size_t k = 0; k < K; ++k) {
      const T xk = x[k];
      s0 = S::fmadd(xk, a0[k], s0);
      s1 = S::fmadd(xk, a1[k], s1);
      s2 = S::fmadd(xk, a2[k], s2);
      s3 = S::fmadd(xk, a3[k], s3);
    }
    y[n] = s0, y[n + 1] = s1, y[n + 2] = s2, y[n + 3] = s3;
  }
  for (; n < N; ++n) {
    const T* a = A + n * lda;
    T s = S::zero();
    for (std::size_t k = 0; k < K; ++k) s = S::fmadd(x[k], a[k], s);
    y[n] = s;
  }
}

// ---------------------------------------------------------------- a matrix stored panel by panel
// y (N) = x (K) · B (K,N) (+ bias (N)) with B stored by panels of NR = panel_width<V> columns:
// columns p·NR … p·NR+NR-1 are the contiguous (K, NR) block at Bp + p·NR·K, the last panel (K, N - p·NR)
// when N is no multiple of NR (K·N elements in all, no padding; pack_panels below writes it). gemv's panels read NR columns of every row of B, a
// stride of N apart; here each panel is one contiguous stream, which is what a matrix read once
// per token from memory needs (a large vocabulary's head, a decoder's layer matrices past the
// caches: pages and prefetchers follow it). The same sums as gemv (k order from 0 + bias, one FMA
// at a time): the same bits.
template <class V> inline constexpr std::size_t panel_width = detail::panel_vectors<V> * V::width;

// NR: the layout's panel width (default panel_width<V>, one panel in registers at a time). Narrower
// panels (NR a multiple of the vector width dividing panel_width<V>: tile_panel_width's 16 columns
// with AVX2) are read panel_width<V> / NR side by side, as many streams; the rest one at a time.
template <class V, std::size_t NR = panel_width<V>, class T>
void gemv_panels_with(T* y, const T* x, const T* Bp, std::size_t N, std::size_t K, const T* bias = nullptr) {
  static_assert(NR >= 1, "sf::kernels::gemv_panels: panels of 0 columns");
  constexpr std::size_t W = V::width, PW = panel_width<V>;
  constexpr std::size_t G = NR % W == 0 && NR < PW && PW % NR == 0 ? PW / NR : 1;  // panels side by side
  std::size_t n0 = 0;
  if constexpr (G > 1)
    for (; n0 + G * NR <= N; n0 += G * NR)
      detail::gemv_panel<V, G * (NR / W), false, G>(y + n0, x, Bp + n0 * K, NR, K, W, bias ? bias + n0 : nullptr, NR * K);
  for (; n0 < N; n0 += NR) {
    const std::size_t w = N - n0 < NR ? N - n0 : NR;  // the panel's width = its row stride
    gemv_with<V>(y + n0, x, Bp + n0 * K, w, w, K, bias ? bias + n0 : nullptr);
  }
}

// Bp (K·N, by panels of NR columns as gemv_panels reads them) = B (K,N) row stride ldb ≥ N:
//   Bp[n0·K + k·w + j] = B[k·ldb + n0 + j]   (panel n0 = p·NR of width w = min(NR, N - n0), j < w)
template <class T>
constexpr void pack_panels(T* Bp, const T* B, std::size_t ldb, std::size_t N, std::size_t K, std::size_t NR) {
  for (std::size_t n0 = 0; n0 < N; n0 += NR) {
    const std::size_t w = N - n0 < NR ? N - n0 : NR;
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t j = 0; j < w; ++j) Bp[n0 * K + k * w + j] = B[k * ldb + n0 + j];
  }
}

namespace ref {
// gemv_panels' sums, with panels of NR columns: y[n] = (0 + bias[n]) + Σ_k x[k]·B[k,n], k order.
template <class T>
constexpr void gemv_panels(T* y, const T* x, const T* Bp, std::size_t N, std::size_t K, std::size_t NR,
                           const T* bias = nullptr) {
  using S = simd::scalar<T>;
  for (std::size_t n = 0; n < N; ++n) {
    const std::size_t n0 = n / NR * NR, w = N - n0 < NR ? N - n0 : NR;  // n's panel: first column, width
    const T* b = Bp + n0 * K + (n - n0);
    T s = S::zero();
    if (bias) s = S::add(s, bias[n]);
    for (std::size_t k = 0; k < K; ++k) s = S::fmadd(x[k], b[k * w], s);
    y[n] = s;
  }
}
}  // namespace ref

// The backend of a product whose weights come from memory (weights_in::memory). Such a product is
// bound by the memory, not by the FMA units (a stories15M-shaped token: 15 M multiply-adds over 61
// MB, about 9 GFLOP/s at 600 tokens/s, far below one core's FMA peak), and which width of loads
// reads memory faster depends on the CPU, so with AVX-512 (and AVX2) it is chosen at run time,
// once (wide_loads_from_memory):
//   - 256-bit vectors (simd::avx2, backend_for's type) on a Zen 4, whose AVX-512 runs on 256-bit
//     halves: a stories15M-shaped decode at 480 tokens/s with AVX-512 products, 600 with these
//     (interleaved runs, the rest of the step AVX-512 in both);
//   - 512-bit vectors (simd::avx512) on a Zen 5 (AMD family 0x1A and later), whose units are 512
//     bits wide: the same decode at 697 tokens/s against 575 with 256-bit loads (medians of 10
//     interleaved runs; this run-time choice against the same code with 256-bit loads: 1.07,
//     the median of 10 paired rounds; docs/benchmarks.md, "Zen 5: both issues' benchmarks, and
//     512-bit loads of weights from memory");
//   - 256-bit on every other CPU, as before the choice (no other has been measured).
// SF_MEMORY_LOADS=256 or 512 (a macro) fixes the width at compile time. Either way the sums are
// the same (per element, in k order, one FMA at a time): the same bits.
namespace detail {
template <class T, weights_in Where> struct backend_for_impl { using type = simd::native<T>; };
#if defined(SF_SIMD_HAVE_AVX512) && defined(SF_SIMD_HAVE_AVX2)
template <> struct backend_for_impl<float, weights_in::memory> {  // (native may be scalar: SF_SIMD_FORCE_SCALAR)
  using type = std::conditional_t<std::is_same_v<simd::native<float>, simd::avx512>, simd::avx2, simd::native<float>>;
};
#endif
// Whether a product of T weights from Where can run on wider vectors than backend_for's (native's).
template <class T, weights_in Where>
inline constexpr bool wider_loads_possible = !std::is_same_v<typename backend_for_impl<T, Where>::type, simd::native<T>>;
#if defined(SF_MEMORY_LOADS) && SF_MEMORY_LOADS != 256 && SF_MEMORY_LOADS != 512
#error "SF_MEMORY_LOADS is 256 or 512 (the width of the loads of weights from memory, kernels/gemv.hpp)"
#endif
// Whether this CPU reads weights from memory with the native (512-bit) vectors (asked once).
inline bool wide_loads_from_memory() {
#if defined(SF_MEMORY_LOADS)
  return SF_MEMORY_LOADS == 512;
#else
  static const bool wide = [] {
    const cpu::x86_model m = cpu::model();
    return m.amd && m.family >= 0x1Au;
  }();
  return wide;
#endif
}
// Calls f(std::type_identity<V>{}) with V the backend a product of T weights from Where runs on here.
template <class T, weights_in Where, class F>
SF_KERNEL_INLINE void with_backend(F&& f) {
  if constexpr (wider_loads_possible<T, Where>)
    if (wide_loads_from_memory()) return f(std::type_identity<simd::native<T>>{});
  f(std::type_identity<typename backend_for_impl<T, Where>::type>{});
}
}  // namespace detail
template <class T, weights_in Where>
using backend_for = typename detail::backend_for_impl<T, Where>::type;

// The entry points: the reference during constant evaluation, at run time the native backend
// (Where = weights_in::cache) or, for weights from memory, the one wide_loads_from_memory chooses.
template <weights_in Where = weights_in::cache, class T>
constexpr void gemv(T* y, const T* x, const T* B, std::size_t ldb, std::size_t N, std::size_t K,
                    const T* bias = nullptr) {
  if (std::is_constant_evaluated()) ref::gemv(y, x, B, ldb, N, K, bias);
  else detail::with_backend<T, Where>([&]<class V>(std::type_identity<V>) { gemv_with<V>(y, x, B, ldb, N, K, bias); });
}
template <std::size_t Share = 1, class T>
constexpr void gemv_batch(const gemv_job<T>* jobs, std::size_t n, std::size_t ldb, std::size_t N, std::size_t K) {
  if (std::is_constant_evaluated()) ref::gemv_batch(jobs, n, ldb, N, K);
  else gemv_batch_with<simd::native<T>, Share>(jobs, n, ldb, N, K);
}
// The panel width of the backend gemv_panels<Where> runs: the layout it reads by default (with
// weights from memory, that of backend_for's vectors, whichever width reads them: any width reads
// any layout).
template <class T, weights_in Where = weights_in::cache>
inline constexpr std::size_t native_panel_width = panel_width<backend_for<T, Where>>;
// NR: the layout's panel width (0: native_panel_width<T, Where>).
template <weights_in Where = weights_in::cache, std::size_t NR = 0, class T>
constexpr void gemv_panels(T* y, const T* x, const T* Bp, std::size_t N, std::size_t K, const T* bias = nullptr) {
  constexpr std::size_t width = NR ? NR : native_panel_width<T, Where>;
  if (std::is_constant_evaluated()) ref::gemv_panels(y, x, Bp, N, K, width, bias);
  else
    detail::with_backend<T, Where>(
        [&]<class V>(std::type_identity<V>) { gemv_panels_with<V, width>(y, x, Bp, N, K, bias); });
}

}  // namespace sf::kernels
