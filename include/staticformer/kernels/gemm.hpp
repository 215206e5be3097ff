// staticformer/kernels/gemm.hpp — the matrix products backprop needs, on compile-time shapes.
//
//   gemm_nn: C (=|+=) A · B (+ bias)     forward  Y = X·W + b,  attention O = P·V,  dQ = dS·K
//   gemm_nt: C (=|+=) A · Bᵀ             backward dX = dY·Wᵀ,   attention S = Q·Kᵀ, dP = dO·Vᵀ
//   gemm_tn: C (=|+=) Aᵀ · B             backward dW += Xᵀ·dY,  attention dV = Pᵀ·dO, dK = dSᵀ·Q
//
// Shapes and row strides are template arguments. During constant evaluation the
// naive reference runs (gemm_ref.hpp); at run time the register-blocked SIMD
// kernel for the chosen backend does. `*_with<Backend>` picks a backend
// explicitly (tests use it to check every backend against the reference).
//
// How the run-time kernels work (one code path, written once against sf::simd):
//
//   * C is cut into register tiles of MR rows × NV vectors (NV·W columns). A tile's
//     MR·NV accumulators stay in registers for a whole block of K: per k, NV vectors
//     of a row of B are loaded, each of the MR values a(i,k) is broadcast, and MR·NV
//     FMAs update the tile (AVX-512: 6 rows × 4 vectors = 6 × 64 floats, 24
//     accumulators; AVX2: 6 × 2 vectors; NEON: 6 × 4). The loops over i and j are
//     unrolled at compile time (index_sequence folds); the loop over k is a plain loop.
//   * The tile shape (MR, NV, partial last vector or not, A transposed or not) is a
//     template argument; strides, the K extent and the lane count of a partial last
//     vector are run-time arguments. So one tile function serves every matrix shape
//     in a program that needs that tile, and a test that instantiates a hundred
//     shapes compiles a few dozen tiles, not thousands.
//   * Remainders: the last column panel has fewer vectors and a masked last vector,
//     the last M % MR rows go through tiles of 4, 2 and 1 rows (with AVX-512, M rows
//     that are a sum of MR and MR − 1 go as such tiles: 16 = 6 + 5 + 5; short_tiles), the
//     last K block is shorter. Any size works, any row strides (e.g. a head's columns inside a (T, D)
//     activation: lda = D, K = d_k).
//   * nn and tn read A in place (nn: a(i,k) = A[i·lda + k], tn: a(i,k) = A[k·lda + i]).
//     B is read in place when its rows are contiguous along N (nn, tn); for nt the
//     slice of B a column panel needs (KC × NV·W) is transposed once (W×W register
//     transposes) into a static buffer of compile-time size and reused by all
//     row tiles. For large nn/tn products whose B row stride is a multiple of 256 B
//     the slice is copied the same way, which avoids L1 set conflicts; for large tn
//     products with such an A, blocks of A are copied with a padded row stride too.
//   * Blocking: column panel (outer) → K block of KC rows → row tiles (inner), so
//     the KC × NV·W slice of B stays in L1 while the row tiles stream A from L2. With 16 row
//     tiles or more, the next slice of B (and gemm_tn's next block of A) is prefetched while the
//     current one is used, so its copy or transpose does not wait for memory. With fewer row
//     tiles and B read in place (a batched decoder step: 16 rows times weights from memory), the
//     tiles fetch the next slice into L2 themselves, a row per k step spread over all of them;
//     gemm_nn_panels' tiles can also fetch a list of other lines (fetch.hpp: a batched
//     decoder step's next attention), one per later k step.
//
// No heap, nothing big on the stack. The only storage beyond registers is two packing
// buffers (static, sizes fixed at compile time: 16 KiB + 28 KiB for AVX-512).
// C must not overlap A, B or bias.
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>

#include "staticformer/kernels/attributes.hpp"
#include "staticformer/kernels/fetch.hpp"
#include "staticformer/parallel.hpp"
#include "staticformer/kernels/gemm_ref.hpp"
#include "staticformer/kernels/gemv.hpp"
#include "staticformer/simd.hpp"

namespace sf::kernels {

namespace detail {
template <class Backend, class T>
inline constexpr bool backend_fits = std::is_same_v<typename Backend::value_type, T>;

// Row strides must not make rows overlap: a row stride is at least the row's length (unless
// there is only one row).
template <std::size_t rows, std::size_t cols, std::size_t ld>
inline constexpr bool stride_ok = rows <= 1 || ld >= cols;

template <std::size_t I> using index = std::integral_constant<std::size_t, I>;

// f(index<0>{}), f(index<1>{}), ..., f(index<N-1>{}) — a loop unrolled at compile time.
// Lambdas passed here are SF_LAMBDA_INLINE: a tile must never become calls (GCC otherwise
// outlines some of them and the accumulators go through memory).
template <class F, std::size_t... I>
SF_KERNEL_INLINE constexpr void unroll_seq(F& f, std::index_sequence<I...>) {
  (f(index<I>{}), ...);
}
template <std::size_t N, class F>
SF_KERNEL_INLINE constexpr void unroll(F&& f) {
  unroll_seq(f, std::make_index_sequence<N>{});
}

constexpr std::size_t min_(std::size_t a, std::size_t b) { return a < b ? a : b; }

// Register tile for backend V and a C with N columns.
template <class V, std::size_t N>
struct tiling {
  static constexpr std::size_t W = V::width;
  static constexpr std::size_t nvec = (N + W - 1) / W;               // vectors per row of C
  static constexpr std::size_t nv_max = V::registers >= 32 ? 4 : 2;
  static constexpr std::size_t NV = min_(nvec, nv_max);              // vectors per tile row
  static constexpr std::size_t NR = NV * W;                          // tile columns
  // The accumulators take what the NV row vectors of B and one broadcast leave,
  // capped at 12 rows (12 row pointers of A already fill most general registers).
  // Fewer rows (M < MR, or the last M % MR) go through tiles of 4, 2 and 1 rows.
  static constexpr std::size_t mr_regs = (V::registers - NV - 2) / NV;
  static constexpr std::size_t MR = min_(mr_regs, 12);               // tile rows
};

// Rows of B per K block: the KC × NR slice of B (and the packing buffer) stays in L1.
inline constexpr std::size_t pack_kc = 64;
template <class V> inline constexpr std::size_t max_tile_cols = (V::registers >= 32 ? 4 : 2) * V::width;

// ---------------------------------------------------------------- the register tile
// C[i, j] (=|+=) Σ_{k<kc} a(i,k) · B[k, j]  (+ bias[j])      i < MR, j < cols = (NV-1)·W + (Partial ? nl : W)
//   C: (MR, cols) row stride ldc
//   A: ATrans = false: a(i,k) = A[i·lda + k]   A: (MR, kc) row stride lda   (nn, nt)
//      ATrans = true:  a(i,k) = A[k·lda + i]   A: (kc, MR) row stride lda   (tn)
//   B: (kc, cols) row stride ldb   — the matrix itself or a packed panel
//   bias: (cols) or nullptr
//   load_c: start from C (accumulate, or a later K block); otherwise from 0.
//   pf: nullptr, or rows the tile fetches into L2 while it runs (panel's next slice): in its first
//       pf_rows k steps, the NV vectors at pf + k·pf_ld (a prefetch never faults; the values are
//       not read)
//   more: nullptr, or lines to fetch into L2 (fetch.hpp): one at each later k step while any are left
//
// Naive reference of the same tile:
//   for i < MR, j < cols: s = (load_c ? C[i,j] : 0) + (bias ? bias[j] : 0);
//                         for k < kc: s += a(i,k) * B[k,j];  C[i,j] = s;
//
// The tile is written with pack expansions over I = i·NV + j (and over i, j alone) rather
// than nested lambdas, so a tile is one function for the compiler to optimise, not MR·NV.
template <class V, std::size_t MR, std::size_t NV, bool Partial, bool ATrans, class T, std::size_t... I,
          std::size_t... J, std::size_t... R>
SF_KERNEL_INLINE void tile_body(std::index_sequence<I...>, std::index_sequence<J...>, std::index_sequence<R...>,
                                T* SF_RESTRICT C, std::size_t ldc, const T* SF_RESTRICT A, std::size_t lda,
                                const T* SF_RESTRICT B, std::size_t ldb, std::size_t kc, std::size_t nl, bool load_c,
                                const T* SF_RESTRICT bias, const T* pf, std::size_t pf_ld, std::size_t pf_rows,
                                fetch_list<T>* more) {
  using reg = typename V::reg;
  constexpr std::size_t W = V::width;
  // vector j of a row starting at p; the last one has nl lanes when Partial
  auto ld = [nl](const T* p, std::size_t j) SF_LAMBDA_INLINE {
    return Partial && j + 1 == NV ? V::load_partial(p + j * W, nl) : V::load(p + j * W);
  };
  reg acc[MR * NV];  // acc[i·NV + j]: C[i, jW:jW+W]
  if (load_c) ((acc[I] = ld(C + (I / NV) * ldc, I % NV)), ...);
  else ((acc[I] = V::zero()), ...);
  if (bias) {  // acc[i·NV + j] += bias[jW:jW+W]
    const reg bv[NV] = {ld(bias, J)...};
    ((acc[I] = V::add(acc[I], bv[I % NV])), ...);
  }
  const T* const arow[MR] = {(ATrans ? A + R : A + R * lda)...};  // a(i,k) = arow[i][k·(ATrans ? lda : 1)]
  const std::size_t astep = ATrans ? lda : 1;
  auto step = [&](std::size_t k) SF_LAMBDA_INLINE {  // acc[i·NV + j] += a(i,k) · B[k, jW:jW+W]
    const reg b[NV] = {ld(B + k * ldb, J)...};
    ((acc[I] = V::fmadd(V::set1(arow[I / NV][k * astep]), b[I % NV], acc[I])), ...);
  };
  std::size_t k = 0;
  if (pf)  // the first pf_rows steps also fetch row k of the prefetch slice into L2 (pf: see panel)
    for (; k < pf_rows; ++k) {
      (SF_PREFETCH_L2(pf + k * pf_ld + J * W), ...);
      step(k);
    }
  if (more)  // then a line of the fetch list at each step, while any are left
    for (; k < kc && more->more(); ++k) {
      more->next();
      step(k);
    }
  for (; k < kc; ++k) step(k);
  ((I % NV + 1 == NV && Partial ? V::store_partial(C + (I / NV) * ldc + (I % NV) * W, acc[I], nl)
                                : V::store(C + (I / NV) * ldc + (I % NV) * W, acc[I])),
   ...);  // C[i, jW:jW+W] = acc[i·NV + j]
}
template <class V, std::size_t MR, std::size_t NV, bool Partial, bool ATrans, class T>
SF_KERNEL_NOINLINE void tile(T* SF_RESTRICT C, std::size_t ldc, const T* SF_RESTRICT A, std::size_t lda,
                             const T* SF_RESTRICT B, std::size_t ldb, std::size_t kc, std::size_t nl, bool load_c,
                             const T* SF_RESTRICT bias, const T* pf = nullptr, std::size_t pf_ld = 0,
                             std::size_t pf_rows = 0, fetch_list<T>* more = nullptr) {
  tile_body<V, MR, NV, Partial, ATrans>(std::make_index_sequence<MR * NV>{}, std::make_index_sequence<NV>{},
                                        std::make_index_sequence<MR>{}, C, ldc, A, lda, B, ldb, kc, nl, load_c, bias,
                                        pf, pf_ld, pf_rows, more);
}

// ---------------------------------------------------------------- packing B
// Transposed (gemm_nt):  P[k, j] = B[j, k]   for j < nc, k < kb;  P[k, j] = 0 for nc <= j < ⌈nc/W⌉·W
//   B: (nc, kb) row stride ldb    P: (kb, ldp) row stride ldp, ldp >= ⌈nc/W⌉·W, a multiple of W
// Naive reference: for k < kb, j < ⌈nc/W⌉·W: P[k*ldp + j] = j < nc ? B[j*ldb + k] : 0;
template <class V, class T>
SF_KERNEL_NOINLINE void pack_transposed(T* SF_RESTRICT P, std::size_t ldp, const T* SF_RESTRICT B, std::size_t ldb,
                                        std::size_t nc, std::size_t kb) {
  using reg = typename V::reg;
  constexpr std::size_t W = V::width;
  for (std::size_t j0 = 0; j0 < nc; j0 += W) {  // W rows of B → W columns of P
    const std::size_t rows = min_(W, nc - j0);
    for (std::size_t k0 = 0; k0 < kb; k0 += W) {  // W columns of B → W rows of P, by one W×W transpose
      const std::size_t kn = min_(W, kb - k0);
      const T* b = B + j0 * ldb + k0;
      reg r[W];
      if (rows == W && kn == W) {
        unroll<W>([&](auto t) SF_LAMBDA_INLINE { r[t] = V::load(b + t * ldb); });
      } else {
        unroll<W>([&](auto t) SF_LAMBDA_INLINE { r[t] = t < rows ? V::load_partial(b + t * ldb, kn) : V::zero(); });
      }
      V::transpose(r);
      T* p = P + k0 * ldp + j0;
      if (kn == W) {
        unroll<W>([&](auto t) SF_LAMBDA_INLINE { V::store(p + t * ldp, r[t]); });
      } else {
        unroll<W>([&](auto t) SF_LAMBDA_INLINE {
          if (t < kn) V::store(p + t * ldp, r[t]);
        });
      }
    }
  }
}
// Copied (large gemm_nn / gemm_tn):  P[k, j] = B[k, j]   for j < nc, k < kb;  0 for nc <= j < ⌈nc/W⌉·W
//   B: (kb, nc) row stride ldb    P: (kb, ldp) row stride ldp
// Naive reference: for k < kb, j < ⌈nc/W⌉·W: P[k*ldp + j] = j < nc ? B[k*ldb + j] : 0;
template <class V, class T>
SF_KERNEL_NOINLINE void pack_copy(T* SF_RESTRICT P, std::size_t ldp, const T* SF_RESTRICT B, std::size_t ldb,
                                  std::size_t nc, std::size_t kb) {
  constexpr std::size_t W = V::width;
  for (std::size_t k = 0; k < kb; ++k) {
    std::size_t j = 0;
    for (; j + W <= nc; j += W) V::store(P + k * ldp + j, V::load(B + k * ldb + j));
    if (j < nc) V::store(P + k * ldp + j, V::load_partial(B + k * ldb + j, nc - j));
  }
}

// The packing buffers: static storage of compile-time size (one per backend, element type and
// use), never on the heap or the stack, and not thread_local, so the kernels link on a
// single-threaded bare-metal target. The products of one program therefore run one at a time
// (see docs/design.md, "More cores, the same answer").
template <class V, class T, std::size_t N, int Use>
struct static_buffer {
  alignas(64) static inline T data[N];
};
// B slices: pack_kc × the widest tile (16 KiB for AVX-512).
template <class V, class T>
inline T* pack_buffer() {
  return static_buffer<V, T, pack_kc * max_tile_cols<V>, 0>::data;
}
// A blocks of gemm_tn: pack_kc rows × a_chunk<V> columns, row stride padded by one vector
// (28 KiB for AVX-512).
template <class V> inline constexpr std::size_t a_chunk = 16 * tiling<V, max_tile_cols<V>>::MR;
template <class V> inline constexpr std::size_t a_chunk_ld = a_chunk<V> + V::width;
template <class V, class T>
inline T* a_buffer() {
  return static_buffer<V, T, pack_kc * a_chunk_ld<V>, 1>::data;
}

// ---------------------------------------------------------------- the blocked driver
// How B is read:
enum class b_layout {
  rows,         // b(k,n) = B[k·ldb + n]   B: (K,N) row stride ldb, read where it is
  rows_copied,  // b(k,n) = B[k·ldb + n]   B: (K,N) row stride ldb, copied per (panel, K block)
  cols,         // b(k,n) = B[n·ldb + k]   B: (N,K) row stride ldb, transposed per (panel, K block)
};

// Copy a (K,N) B when the product is big enough to amortise the copy and B's row
// stride is a multiple of 256 bytes: then the rows of a KC × NR slice fall into a
// few L1 sets and evict each other.
template <class V, std::size_t M, std::size_t N, std::size_t K, std::size_t ldb, class T>
inline constexpr b_layout rows_layout =
    (V::width > 1 && M >= 96 && K > pack_kc / 2 && N > tiling<V, N>::NR && (ldb * sizeof(T)) % 256 == 0)
        ? b_layout::rows_copied
        : b_layout::rows;

// How M rows go into row tiles: MR rows while they last, then 4, 2 and 1 — or, with AVX-512
// (512-bit vectors, 32 registers), tiles of MR and MR − 1 rows when M is a sum of those (16 = 6 + 5
// + 5: a batched decoder step's rows) and not a multiple of MR. There a tile of 4 rows × 4 vectors
// runs well below the FMA peak (72–84% in L1 on a Zen 4, beside 95–100% for 5 and 6 rows:
// docs/benchmarks.md, "Batched decoding: 16 rows as 6 + 5 + 5; …"). short_tiles: how many MR − 1
// tiles (0: the first way). Each element is summed alike in any tile: the same bits.
template <class V, std::size_t MR> inline constexpr bool with_short_tiles = V::width >= 16 && MR >= 6;
template <class V, std::size_t MR>
constexpr std::size_t short_tiles(std::size_t M) {
  if constexpr (!with_short_tiles<V, MR>) {
    return 0;
  } else {
    if (M % MR == 0) return 0;
    for (std::size_t s = 1; s < MR && s * (MR - 1) <= M; ++s)
      if ((M - s * (MR - 1)) % MR == 0) return s;
    return 0;
  }
}

// One column panel of C, all K blocks, all row tiles:
//   C[:, 0:nc] (=|+=) Σ_k a(m,k) · b(k,n) (+ bias[n])   m < M, n < nc = (NVp-1)·W + (Partial ? nl : W)
//   C: (M, nc) row stride ldc (already offset to the panel's first column)
//   A: ATrans = false: a(m,k) = A[m·lda + k]  (M,K);  ATrans = true: a(m,k) = A[k·lda + m]  (K,M)
//   B: BCols = false: b(k,n) = B[k·ldb + n]  (K, nc), copied per K block when copy_b
//      BCols = true:  b(k,n) = B[n·ldb + k]  (nc, K), always transposed per K block
//   bias: (nc) or nullptr      acc: C += ... instead of C = ...
//   pack: the B slice buffer (pack_buffer: pack_kc × max_tile_cols), used when BCols or copy_b
//   next_b, next_nc: the panel that follows this one (its B, as B here; row stride ldb) and its columns (0: none),
//     whose first slice of B is fetched ahead
//   more: nullptr, or lines the tiles fetch into L2 as they go (tile's `more`)
// M, K and the strides are run-time values, and the M % MR remainder rows go through tiles
// of 4, 2 and 1 rows (or M through tiles of MR and MR − 1: short_tiles): a panel depends only on the tile (MR × NVp, partial or not), so
// every shape of a program that tiles alike shares it, which keeps compile times down.
// Naive reference: for m < M, n < nc: s = bias[n] + Σ_k a(m,k)·b(k,n); C[m,n] = acc ? C[m,n] + s : s;
template <class V, std::size_t MR, std::size_t NVp, bool Partial, bool ATrans, bool BCols, class T>
SF_KERNEL_NOINLINE void panel(T* C, std::size_t ldc, const T* A, std::size_t lda, const T* B, std::size_t ldb,
                              std::size_t M, std::size_t K, std::size_t nc, bool acc, const T* bias, bool copy_b,
                              T* pack, const T* next_b, std::size_t next_nc, fetch_list<T>* more = nullptr) {
  constexpr std::size_t W = V::width;
  const std::size_t nl = nc - (NVp - 1) * W;  // lanes of the last vector
  for (std::size_t k0 = 0; k0 < K; k0 += pack_kc) {  // K blocks of pack_kc rows of B
    const std::size_t kb = min_(pack_kc, K - k0);
    const T* Bk = B + k0 * ldb;
    std::size_t ldbk = ldb;
    if constexpr (BCols) {
      pack_transposed<V>(pack, NVp * W, B + k0, ldb, nc, kb);
      Bk = pack, ldbk = NVp * W;
    } else if (copy_b) {
      pack_copy<V>(pack, NVp * W, Bk, ldb, nc, kb);
      Bk = pack, ldbk = NVp * W;
    }
    const bool load_c = acc || k0 > 0;
    const T* bk = k0 == 0 ? bias : nullptr;
    const T* Ak = ATrans ? A + k0 * lda : A + k0;
    // The next slice of B (the next K block of this panel, else the first of the next panel) is
    // fetched into the caches while the row tiles of this one run, a few of its lines after each
    // tile, so that the next copy or transpose does not wait for memory (2-3% of a training step
    // at micro and small, where the weights and activations are not all in L2). The slice:
    //   BCols: rows n < n_next of B, columns [k_next, k_next + k_len)
    //   else:  rows [k_next, k_next + k_len), columns n < n_next
    const bool next_block = k0 + pack_kc < K;
    const std::size_t k_next = next_block ? k0 + pack_kc : 0, k_len = min_(pack_kc, K - k_next),
                      n_next = next_block ? nc : next_nc;
    const T* const next = next_block ? B : next_b;  // the panel the slice is in
    // Only with at least 16 row tiles, a few lines after each: with fewer rows (a batched decoder
    // step's 16) the bursts cost more than they save (8% slower at stories15M, 16 streams).
    const bool ahead = M >= 16 * MR && n_next != 0;
    // With fewer row tiles and B read in place (a batched decoder step: 16 rows, weights from
    // memory), the tiles themselves fetch the next slice into L2, spread over all of them: row
    // tile t of n fetches its rows t, t+n, t+2n, …, one row per k step (NVp vectors) alongside its
    // FMAs. (A 16-stream stories15M step's products, weights from memory: 58% → 76% of the FMA
    // peak, sf_bench_kernels' batched_products; fetched into L1 instead they were slower than
    // without, and bursts after each tile, as `ahead` does, 8% slower.)
    const bool in_tile = W > 1 && !ahead && !BCols && !copy_b && n_next != 0;
    const std::size_t n_short = short_tiles<V, MR>(M), n_full = n_short ? (M - n_short * (MR - 1)) / MR : 0;
    const std::size_t n_tiles = [&] {
      if (n_short) return n_full + n_short;
      std::size_t n = M / MR, r = M % MR;
      if constexpr (MR > 4) n += r / 4, r %= 4;
      if constexpr (MR > 2) n += r / 2, r %= 2;
      return n + r;
    }();
    const std::size_t next_rows = !ahead ? 0 : BCols ? n_next : k_len, next_cols = BCols ? k_len : n_next,
                      row0 = BCols ? 0 : k_next, col0 = BCols ? k_next : 0;
    const std::size_t per_tile = (next_rows + M / MR) / (M / MR + 1);  // rows of the slice per row tile
    std::size_t next_row = 0;
    auto fetch_next = [&]() SF_LAMBDA_INLINE {
      for (std::size_t e = min_(next_rows, next_row + per_tile); next_row < e; ++next_row)
        for (std::size_t c = 0; c < next_cols; c += 64 / sizeof(T)) SF_PREFETCH(next + (row0 + next_row) * ldb + col0 + c);
    };
    // row tiles: C[m0:m0+R, :] (=|+=) a[m0:m0+R, k0:k0+kb] · b[k0:k0+kb, :]
    std::size_t m0 = 0, t = 0;
    auto rows = [&]<std::size_t R>() SF_LAMBDA_INLINE {
      // in_tile: this tile's rows of the next slice, rows k_next + t, + t + n, … (+ n_tiles·ldb each)
      const std::size_t pf_rows = in_tile && t < k_len ? min_(kb, (k_len - t + n_tiles - 1) / n_tiles) : 0;
      tile<V, R, NVp, Partial, ATrans>(C + m0 * ldc, ldc, Ak + (ATrans ? m0 : m0 * lda), lda, Bk, ldbk, kb, nl, load_c,
                                       bk, pf_rows ? next + (k_next + t) * ldb : nullptr, n_tiles * ldb, pf_rows, more);
      m0 += R;
      ++t;
      if constexpr (W > 1) fetch_next();
    };
    if constexpr (with_short_tiles<V, MR>)
      if (n_short) {  // n_full tiles of MR rows, then n_short of MR − 1
        for (std::size_t i = 0; i < n_full; ++i) rows.template operator()<MR>();
        for (std::size_t i = 0; i < n_short; ++i) rows.template operator()<MR - 1>();
        continue;
      }
    while (m0 + MR <= M) rows.template operator()<MR>();
    if constexpr (MR > 4) while (m0 + 4 <= M) rows.template operator()<4>();
    if constexpr (MR > 2) if (m0 + 2 <= M) rows.template operator()<2>();
    if constexpr (MR > 1) if (m0 + 1 <= M) rows.template operator()<1>();
  }
}

// Copy gemm_tn's A (K,M) block by block when it is large and its row stride is a multiple of
// 256 bytes: a tile reads MR consecutive elements from each of KC rows of A, and with such a
// stride those rows fall into a few L1 sets; the copy's stride is one vector longer.
template <class V, std::size_t M, std::size_t K, std::size_t lda, class T>
inline constexpr bool copy_a = V::width > 1 && M >= 96 && K > pack_kc / 2 && (lda * sizeof(T)) % 256 == 0;

// C (M,N) (=|+=) Σ_k a(m,k) · b(k,n) (+ bias[n]) — column panels of NV vectors, then (NVr > 0)
// one of NVr vectors whose last one is partial when PartialR.
//   C: (M,N) row stride ldc;  A, B, bias, acc, copy_b: as for panel, over all N columns
//   after, after_nc: what the last panel fetches ahead as if it were the next panel (nullptr: nothing)
//   more: nullptr, or lines the tiles fetch into L2 as they go (tile's `more`)
// Run-time M, N, K: shared by all shapes that tile alike.
template <class V, std::size_t MR, std::size_t NV, std::size_t NVr, bool PartialR, bool ATrans, bool BCols, class T>
SF_KERNEL_NOINLINE void gemm_tiled(T* C, std::size_t ldc, const T* A, std::size_t lda, const T* B, std::size_t ldb,
                                   std::size_t M, std::size_t N, std::size_t K, bool acc, const T* bias, bool copy_b,
                                   T* pack, const T* after, std::size_t after_nc, fetch_list<T>* more) {
  constexpr std::size_t NR = NV * V::width;
  auto b_at = [&](std::size_t n) { return BCols ? B + n * ldb : B + n; };  // panel n's B
  std::size_t n0 = 0;
  for (; n0 + NR <= N; n0 += NR) {  // C[:, n0:n0+NR]
    const bool last = n0 + NR == N;
    panel<V, MR, NV, false, ATrans, BCols>(C + n0, ldc, A, lda, b_at(n0), ldb, M, K, NR, acc, bias ? bias + n0 : nullptr,
                                           copy_b, pack, last ? after : b_at(n0 + NR),
                                           last ? (after ? after_nc : 0) : min_(NR, N - n0 - NR), more);
  }
  if constexpr (NVr != 0)  // C[:, n0:N] (none when N is a column range ending on a panel boundary)
    if (n0 < N) panel<V, MR, NVr, PartialR, ATrans, BCols>(C + n0, ldc, A, lda, b_at(n0), ldb, M, K, N - n0, acc,
                                                           bias ? bias + n0 : nullptr, copy_b, pack, after,
                                                           after ? after_nc : 0, more);
}

// The tiling of a compile-time (M,N,K) product, then gemm_tiled over the rows [m_begin, m_end)
// and the columns [n_begin, n_end) of C (n_begin a multiple of the panel width, n_end one or N)
// — directly, or (CopyA, gemm_tn, all columns) per block of pack_kc rows × a_chunk columns of A
// copied to `abuf`:
//   C[m0:m0+mc, :] (=|+=) A[k0:k0+kb, m0:m0+mc]ᵀ · B[k0:k0+kb, :]   for every (k0, m0)
template <class V, std::size_t M, std::size_t N, std::size_t K, bool ATrans, b_layout BL, bool CopyA, class T>
SF_KERNEL_INLINE void gemm_rows(T* C, std::size_t ldc, const T* A, std::size_t lda, const T* B, std::size_t ldb,
                                bool acc, const T* bias, std::size_t m_begin, std::size_t m_end, std::size_t n_begin,
                                std::size_t n_end, T* pack, T* abuf) {
  using P = tiling<V, N>;
  constexpr std::size_t W = V::width, rem = N % P::NR;  // last panel: ⌈rem/W⌉ vectors, partial unless rem % W == 0
  constexpr auto run = gemm_tiled<V, P::MR, P::NV, (rem + W - 1) / W, rem % W != 0, ATrans, BL == b_layout::cols, T>;
  constexpr bool copy_b = BL == b_layout::rows_copied;
  if constexpr (CopyA) {
    static_assert(ATrans && BL != b_layout::cols, "sf::kernels: the A copy is for gemm_tn");
    for (std::size_t k0 = 0; k0 < K; k0 += pack_kc) {  // K blocks: C (=|+=) ... + A[k0:k0+kb, :]ᵀ · B[k0:k0+kb, :]
      const std::size_t kb = min_(pack_kc, K - k0);
      for (std::size_t m0 = m_begin; m0 < m_end; m0 += a_chunk<V>) {  // row chunks: C[m0:m0+mc, :]
        const std::size_t mc = min_(a_chunk<V>, m_end - m0);
        pack_copy<V>(abuf, a_chunk_ld<V>, A + k0 * lda + m0, lda, mc, kb);  // abuf[k, i] = A[k0 + k, m0 + i]
        // the next block of A into the caches while this one is used: the next chunk of columns,
        // else the first chunk of the next K block
        const std::size_t m1 = m0 + a_chunk<V> < m_end ? m0 + a_chunk<V> : m_begin, k1 = m1 != m_begin ? k0 : k0 + pack_kc;
        if (k1 < K)
          for (std::size_t k = k1; k < min_(K, k1 + pack_kc); ++k)
            for (std::size_t i = 0; i < min_(a_chunk<V>, m_end - m1); i += 64 / sizeof(T)) SF_PREFETCH(A + k * lda + m1 + i);
        run(C + m0 * ldc, ldc, abuf, a_chunk_ld<V>, B + k0 * ldb, ldb, mc, N, kb, acc || k0 > 0,
            k0 == 0 ? bias : nullptr, copy_b, pack, nullptr, 0, nullptr);
      }
    }
  } else {
    run(C + m_begin * ldc + n_begin, ldc, ATrans ? A + m_begin : A + m_begin * lda, lda,
        BL == b_layout::cols ? B + n_begin * ldb : B + n_begin, ldb, m_end - m_begin, n_end - n_begin, K, acc,
        bias ? bias + n_begin : nullptr, copy_b, pack, nullptr, 0, nullptr);
  }
}

// Products at least this large (M·N·K multiply-adds) are split over the installed runner's tasks.
inline constexpr std::size_t parallel_min_work = std::size_t{1} << 17;

// The whole product: one task, or (with sf::parallel::current installed, a product of at least
// parallel_min_work) one part of C per task, each task with its own buffers: column panels when
// their number is a multiple of the task count (each task then packs only its own panels of B;
// not for gemm_tn's A copy, which every task would repeat), otherwise row ranges, each a multiple
// of the tile height. An element of C is computed the same way whichever task computes it (the
// tiles sum in k order, one FMA at a time): the same bits for any split.
template <class V, std::size_t M, std::size_t N, std::size_t K, bool ATrans, b_layout BL, bool CopyA, class T>
SF_KERNEL_INLINE void gemm_blocked(T* C, std::size_t ldc, const T* A, std::size_t lda, const T* B, std::size_t ldb,
                                   bool acc, const T* bias) {
  constexpr std::size_t MR = tiling<V, N>::MR, NR = tiling<V, N>::NR;
  static_assert((pack_kc * max_tile_cols<V> + pack_kc * a_chunk_ld<V>) * sizeof(T) <= parallel::gemm_buffer_bytes,
                "sf::kernels: a task's GEMM buffers exceed sf::parallel::gemm_buffer_bytes");
  const parallel::runner* r = parallel::current;
  // Rows [m0, m1) and columns [n0, n1) of C with the buffers of task `task`: task 0 the static
  // ones (or, for a product computed inside another split's task, that thread's own), task i its own.
  auto part = [&](std::size_t m0, std::size_t m1, std::size_t n0, std::size_t n1, std::size_t task) {
    void* own = nullptr;
    if (r != nullptr) own = task > 0 ? r->buffer(*r, task) : parallel::in_task && r->own_buffer ? r->own_buffer(*r) : nullptr;
    T* const pack = own ? static_cast<T*>(own) : pack_buffer<V, T>();
    T* const abuf = own ? pack + pack_kc * max_tile_cols<V> : a_buffer<V, T>();
    gemm_rows<V, M, N, K, ATrans, BL, CopyA>(C, ldc, A, lda, B, ldb, acc, bias, m0, m1, n0, n1, pack, abuf);
  };
  constexpr std::size_t tiles = (M + MR - 1) / MR, panels = (N + NR - 1) / NR;
  if constexpr (M * N * K >= parallel_min_work) {
    if (!CopyA && r != nullptr && r->tasks > 1 && panels % r->tasks == 0) {
      parallel::for_ranges(panels, [&](std::size_t p0, std::size_t p1, std::size_t task) {
        part(0, M, p0 * NR, min_(N, p1 * NR), task);
      });
      return;
    }
    if constexpr (M >= 2 * MR) {
      parallel::for_ranges(tiles, [&](std::size_t t0, std::size_t t1, std::size_t task) {
        part(min_(M, t0 * MR), min_(M, t1 * MR), 0, N, task);
      });
      return;
    }
  }
  part(0, M, 0, N, 0);
}
}  // namespace detail

// C (M,N) (=|+=) A (M,K) · B (K,N) (+ bias (N)) with backend V.
//   C: (M,N) row stride ldc   A: (M,K) row stride lda   B: (K,N) row stride ldb   bias: (N) or nullptr
// Naive reference: ref::gemm_nn (for m, n: s = bias[n]; for k: s += A[m,k]·B[k,n]; C[m,n] (=|+=) s)
template <class Backend, std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb,
          std::size_t ldc, bool Acc, class T>
void gemm_nn_with(T* C, const T* A, const T* B, const T* bias) {
  static_assert(detail::backend_fits<Backend, T>, "sf::kernels::gemm_nn_with: backend element type differs from T");
  static_assert(detail::stride_ok<M, K, lda> && detail::stride_ok<K, N, ldb> && detail::stride_ok<M, N, ldc>,
                "sf::kernels::gemm_nn: a row stride is shorter than its row (A (M,K) needs lda >= K, B (K,N) "
                "ldb >= N, C (M,N) ldc >= N)");
  if constexpr (M == 0 || N == 0 || K == 0) {
    ref::gemm_nn<M, N, K, lda, ldb, ldc, Acc>(C, A, B, bias);
  } else if constexpr (M == 1 && !Acc) {  // one row (a decoder step): the same sums, more chains in flight
    gemv_with<Backend>(C, A, B, ldb, N, K, bias);
  } else {
    constexpr auto BL = detail::rows_layout<Backend, M, N, K, ldb, T>;
    detail::gemm_blocked<Backend, M, N, K, false, BL, false>(C, ldc, A, lda, B, ldb, Acc, bias);
  }
}
// C (M,N) (=|+=) A (M,K) · B (N,K)ᵀ with backend V.
//   C: (M,N) row stride ldc   A: (M,K) row stride lda   B: (N,K) row stride ldb
// Naive reference: ref::gemm_nt (for m, n: s = Σ_k A[m,k]·B[n,k]; C[m,n] (=|+=) s)
template <class Backend, std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb,
          std::size_t ldc, bool Acc, class T>
void gemm_nt_with(T* C, const T* A, const T* B) {
  static_assert(detail::backend_fits<Backend, T>, "sf::kernels::gemm_nt_with: backend element type differs from T");
  static_assert(detail::stride_ok<M, K, lda> && detail::stride_ok<N, K, ldb> && detail::stride_ok<M, N, ldc>,
                "sf::kernels::gemm_nt: a row stride is shorter than its row (A (M,K) needs lda >= K, B (N,K) "
                "ldb >= K, C (M,N) ldc >= N)");
  if constexpr (M == 0 || N == 0 || K == 0)
    ref::gemm_nt<M, N, K, lda, ldb, ldc, Acc>(C, A, B);
  else
    detail::gemm_blocked<Backend, M, N, K, false, detail::b_layout::cols, false>(C, ldc, A, lda, B, ldb, Acc,
                                                                          static_cast<const T*>(nullptr));
}
// C (M,N) (=|+=) A (K,M)ᵀ · B (K,N) with backend V.
//   C: (M,N) row stride ldc   A: (K,M) row stride lda   B: (K,N) row stride ldb
// Naive reference: ref::gemm_tn (for m, n: s = Σ_k A[k,m]·B[k,n]; C[m,n] (=|+=) s)
template <class Backend, std::size_t M, std::size_t N, std::size_t K, std::size_t lda, std::size_t ldb,
          std::size_t ldc, bool Acc, class T>
void gemm_tn_with(T* C, const T* A, const T* B) {
  static_assert(detail::backend_fits<Backend, T>, "sf::kernels::gemm_tn_with: backend element type differs from T");
  static_assert(detail::stride_ok<K, M, lda> && detail::stride_ok<K, N, ldb> && detail::stride_ok<M, N, ldc>,
                "sf::kernels::gemm_tn: a row stride is shorter than its row (A (K,M) needs lda >= M, B (K,N) "
                "ldb >= N, C (M,N) ldc >= N)");
  if constexpr (M == 0 || N == 0 || K == 0) {
    ref::gemm_tn<M, N, K, lda, ldb, ldc, Acc>(C, A, B);
  } else {
    constexpr auto BL = detail::rows_layout<Backend, M, N, K, ldb, T>;
    constexpr bool CA = detail::copy_a<Backend, M, K, lda, T>;
    detail::gemm_blocked<Backend, M, N, K, true, BL, CA>(C, ldc, A, lda, B, ldb, Acc, static_cast<const T*>(nullptr));
  }
}

// The entry points: the naive reference during constant evaluation (it rounds as the tiles do),
// the native backend at run time. (The stride checks are in the *_with functions, which are
// instantiated either way.)
// C (M,N) (=|+=) A (M,K) · B (K,N) (+ bias (N))
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda = K, std::size_t ldb = N,
          std::size_t ldc = N, bool Acc = false, class T>
constexpr void gemm_nn(T* C, const T* A, const T* B, const T* bias = nullptr) {
  if (std::is_constant_evaluated()) ref::gemm_nn<M, N, K, lda, ldb, ldc, Acc>(C, A, B, bias);
  else gemm_nn_with<simd::native<T>, M, N, K, lda, ldb, ldc, Acc>(C, A, B, bias);
}
// The panel width that gemm_nn_panels' register tiles read whole: the widest tile's columns (16
// floats with AVX2, 64 with AVX-512). A matrix stored by panels this wide is read by R rows' products
// (the batched decoder's steps) as one stream, and by one row's (gemv_panels, which then reads
// panel_width / NP panels side by side) as a few: what a matrix from memory needs. On a Zen 3
// (AVX2), the products of a stories15M step's 61 MB of weights by panels of 64 against 16 columns,
// medians of 30 in one program, three rounds: 2 rows 11.3-11.7 → 6.2-7.1 ms, 4 rows 10.3-12.3 →
// 5.7-6.7, 16 rows 15.5-15.6 → 11.9-12.2; one row (4 panels side by side) 3.8-4.0 → 3.2-3.3 ms.
template <class T> inline constexpr std::size_t tile_panel_width = detail::max_tile_cols<simd::native<T>>;

// C (M,N) = A (M,K) · B (+ bias (N)) with B stored by panels of NP columns (kernels::gemv_panels'
// layout: panel p, the columns p·NP …, is the contiguous (K, min(NP, N − p·NP)) block at p·NP·K),
// with backend V: a gemm_nn per panel (the same sums), each but the last fetching the next panel's
// first rows while its last K block runs (gemm_tiled's `after`; with a parallel runner installed,
// gemm_nn_with per panel, which splits it).
//   C: (M,N) row stride ldc   A: (M,K) row stride lda   B: N·K values   bias: (N) or nullptr
//   more: nullptr, or lines for the full panels' register tiles to fetch into L2 beside their FMAs,
//     one per k step (fetch.hpp: a batched decoder step's next attention; not with M = 1, the
//     scalar backend or a parallel runner)
// Naive reference: for p: ref::gemm_nn<M, NPp, K, lda, NPp, ldc>(C + p·NP, A, B + p·NP·K, bias + p·NP)
// With NP = tile_panel_width<T> (above) the tiles read each panel as one stream, row after row; a
// wider panel is read a tile's columns at a time, every pass a stride through all its rows.
template <class Backend, std::size_t M, std::size_t N, std::size_t K, std::size_t NP, std::size_t lda, std::size_t ldc,
          class T>
void gemm_nn_panels_with(T* C, const T* A, const T* B, const T* bias = nullptr, fetch_list<T>* more = nullptr) {
  static_assert(NP > 0, "sf::kernels::gemm_nn_panels: panels of 0 columns");
  constexpr std::size_t full = N / NP, last = N - full * NP;
  using P = detail::tiling<Backend, NP>;
  constexpr std::size_t W = Backend::width, rem = NP % P::NR;
  if constexpr (full == 0) {
  } else if (M == 1 || W == 1 || parallel::current != nullptr) {
    for (std::size_t p = 0; p < full; ++p)
      gemm_nn_with<Backend, M, NP, K, lda, NP, ldc, false>(C + p * NP, A, B + p * NP * K, bias ? bias + p * NP : nullptr);
  } else {
    constexpr auto run = detail::gemm_tiled<Backend, P::MR, P::NV, (rem + W - 1) / W, rem % W != 0, false, false, T>;
    for (std::size_t p = 0; p < full; ++p) {
      const bool ahead = p + 1 < full || last > 0;
      run(C + p * NP, ldc, A, lda, B + p * NP * K, NP, M, NP, K, false, bias ? bias + p * NP : nullptr, false,
          detail::pack_buffer<Backend, T>(), ahead ? B + (p + 1) * NP * K : nullptr, p + 1 < full ? NP : last, more);
    }
  }
  if constexpr (last > 0)
    gemm_nn_with<Backend, M, last, K, lda, last, ldc, false>(C + full * NP, A, B + full * NP * K,
                                                             bias ? bias + full * NP : nullptr);
}
template <std::size_t M, std::size_t N, std::size_t K, std::size_t NP, std::size_t lda = K, std::size_t ldc = N, class T>
constexpr void gemm_nn_panels(T* C, const T* A, const T* B, const T* bias = nullptr, fetch_list<T>* more = nullptr) {
  if (std::is_constant_evaluated()) {
    constexpr std::size_t full = N / NP, last = N - full * NP;
    if constexpr (full > 0)
      for (std::size_t p = 0; p < full; ++p)
        ref::gemm_nn<M, NP, K, lda, NP, ldc, false>(C + p * NP, A, B + p * NP * K, bias ? bias + p * NP : nullptr);
    if constexpr (last > 0)
      ref::gemm_nn<M, last, K, lda, last, ldc, false>(C + full * NP, A, B + full * NP * K, bias ? bias + full * NP : nullptr);
  } else {
    gemm_nn_panels_with<simd::native<T>, M, N, K, NP, lda, ldc>(C, A, B, bias, more);
  }
}
// C (M,N) (=|+=) A (M,K) · B (N,K)ᵀ
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda = K, std::size_t ldb = K,
          std::size_t ldc = N, bool Acc = false, class T>
constexpr void gemm_nt(T* C, const T* A, const T* B) {
  if (std::is_constant_evaluated()) ref::gemm_nt<M, N, K, lda, ldb, ldc, Acc>(C, A, B);
  else gemm_nt_with<simd::native<T>, M, N, K, lda, ldb, ldc, Acc>(C, A, B);
}
// C (M,N) (=|+=) A (K,M)ᵀ · B (K,N)
template <std::size_t M, std::size_t N, std::size_t K, std::size_t lda = M, std::size_t ldb = N,
          std::size_t ldc = N, bool Acc = false, class T>
constexpr void gemm_tn(T* C, const T* A, const T* B) {
  if (std::is_constant_evaluated()) ref::gemm_tn<M, N, K, lda, ldb, ldc, Acc>(C, A, B);
  else gemm_tn_with<simd::native<T>, M, N, K, lda, ldb, ldc, Acc>(C, A, B);
}

}  // namespace sf::kernels
