// kernel_check.cpp — the kernels of the firmware's decoder run on the emulated Cortex-M4 against
// their references, bit for bit, on odd sizes (the CTest firmware_cortex_m4 runs it):
//   * int8: matvec_simd32 with the Armv7E-M DSP instructions (SXTB16, SMLAD: what q8::scalar
//     runs on this target) and with their C model, against the plain scalar product
//     matvec_scalar, with and without bias, guards after y;
//   * float: gemv and gemv_batch (the scalar backend, the step's products) against ref::gemv,
//     and gemv_rows (a tied head read in place) against ref::gemv of the transpose.
// Prints one line per check and "kernel check: N failures"; exit status 0 iff none.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "board.hpp"
#include "staticformer/kernels/gemv.hpp"
#include "staticformer/kernels/q8.hpp"

#if !defined(__ARM_FEATURE_SIMD32)
#error "kernel_check: built for a target without the Armv7E-M DSP instructions (needs -mcpu=cortex-m4)"
#endif

namespace {
namespace q8 = sf::kernels::q8;
constexpr std::size_t Ks[] = {1, 7, 31, 32, 33, 40, 48, 64, 100, 160, 256};
constexpr std::size_t Ns[] = {1, 5, 16, 17, 33, 65, 100};
constexpr std::size_t Kmax = 256, Nmax = 100, Gmax = q8::groups_of(Kmax), NBmax = q8::blocks_of(Nmax);
constexpr std::size_t guard = 8;

std::int8_t cq[Nmax * Kmax];
float cd[Nmax * Gmax];
std::int8_t pq[NBmax * Gmax * q8::tile_bytes];
float pd[NBmax * Gmax * q8::block_cols];
std::int16_t pqsum[NBmax * Gmax * q8::block_cols];
float x[Kmax], bias[Nmax], y0[Nmax + guard], y1[Nmax + guard];
std::int8_t xq[Gmax * q8::group_size];
std::uint8_t xu[Gmax * q8::group_size];
float xd[Gmax];
constexpr std::size_t gemv_Kmax = 65, gemv_Nmax = 65;  // (the board's 128 KiB of RAM)
float A[gemv_Kmax * (gemv_Nmax + 3)], At[gemv_Nmax * gemv_Kmax];

std::uint32_t state = 12345;
std::uint32_t next() {  // xorshift32
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}
float uniform() { return static_cast<float>(next() >> 8) * 0x1p-24f * 2.0f - 1.0f; }  // [-1, 1)

int failures = 0;
void report(bool ok, const char* what, std::size_t K, std::size_t N) {
  if (ok) return;
  ++failures;
  if (failures <= 20) board::line() << "FAIL " << what << " K=" << K << " N=" << N << "\n";
}
void summary(const char* what, std::size_t shapes, int failures_before) {
  board::line() << (failures == failures_before ? "ok   " : "FAIL ") << what << ": " << shapes << " shapes, "
                << failures - failures_before << " failures\n";
}
bool guards_intact(const float* y, std::size_t N) {
  for (std::size_t i = N; i < N + guard; ++i)
    if (std::memcmp(&y[i], "\x55\x55\x55\x55", 4) != 0) return false;
  return true;
}

void check_q8() {
  const int before = failures;
  std::size_t shapes = 0;
  for (int data = 0; data < 2; ++data)
    for (const std::size_t K : Ks)
      for (const std::size_t N : Ns) {
        const std::size_t G = q8::groups_of(K);
        for (std::size_t i = 0; i < N * K; ++i) cq[i] = static_cast<std::int8_t>(static_cast<int>(next() % 255) - 127);
        for (std::size_t i = 0; i < N * G; ++i)  // data 1: scales from 2^-8 to 2^8, and all-zero groups
          cd[i] = data == 0 ? 0.01f + 0.001f * static_cast<float>(next() % 100)
                            : static_cast<float>(1u << (next() % 17)) * 0x1p-8f;
        if (data == 1)
          for (std::size_t n = 0; n < N; n += 3)
            for (std::size_t k = 0; k < (K < 32 ? K : 32); ++k) cq[n * K + k] = 0;
        q8::detail::pack(pq, pd, pqsum, cq, cd, K, N);
        for (std::size_t k = 0; k < K; ++k) x[k] = data == 1 && k < 32 ? 0.0f : uniform() * 3.0f;
        for (std::size_t n = 0; n < N; ++n) bias[n] = uniform();
        q8::scalar::quantize(xq, xu, xd, x, K);
        const q8::detail::mat_ref w{pq, pd, pqsum, G, N};
        const q8::detail::vec_ref v{xq, xu, xd, G};
        for (int with_bias = 0; with_bias < 2; ++with_bias) {
          const float* b = with_bias ? bias : nullptr;
          std::memset(y0, 0x55, sizeof y0);
          std::memset(y1, 0x55, sizeof y1);
          q8::detail::matvec_scalar(y0, v, w, b);
          q8::detail::matvec_simd32<q8::detail::simd32_acle>(y1, v, w, b);
          report(std::memcmp(y0, y1, N * sizeof(float)) == 0 && guards_intact(y1, N), "int8 SMLAD matvec", K, N);
          std::memset(y1, 0x55, sizeof y1);
          q8::detail::matvec_simd32<q8::detail::simd32_portable>(y1, v, w, b);
          report(std::memcmp(y0, y1, N * sizeof(float)) == 0 && guards_intact(y1, N), "int8 C-model matvec", K, N);
          std::memset(y1, 0x55, sizeof y1);
          q8::scalar::matvec(y1, v, w, b);  // what the decoder calls
          report(std::memcmp(y0, y1, N * sizeof(float)) == 0 && guards_intact(y1, N), "int8 q8::scalar::matvec", K, N);
        }
        ++shapes;
      }
  summary("int8 matvec (SMLAD, C model, q8::scalar) = matvec_scalar", shapes, before);
}

void check_gemv() {
  using S = sf::simd::scalar<float>;
  const int before = failures;
  std::size_t shapes = 0;
  for (const std::size_t K : {1u, 7u, 16u, 48u, 64u, 65u})
    for (const std::size_t N : {1u, 3u, 8u, 9u, 17u, 64u, 65u}) {
      const std::size_t ldb = N + 3;
      for (std::size_t i = 0; i < K * ldb; ++i) A[i] = uniform();
      for (std::size_t k = 0; k < K; ++k) x[k] = uniform();
      for (std::size_t n = 0; n < N; ++n) bias[n] = uniform();
      std::memset(y0, 0x55, sizeof y0);
      std::memset(y1, 0x55, sizeof y1);
      sf::kernels::ref::gemv(y0, x, A, ldb, N, K, bias);
      sf::kernels::gemv_with<S>(y1, x, A, ldb, N, K, bias);
      report(std::memcmp(y0, y1, N * sizeof(float)) == 0 && guards_intact(y1, N), "float gemv", K, N);
      std::memset(y1, 0x55, sizeof y1);
      const sf::kernels::gemv_job<float> job{y1, x, A, bias};
      sf::kernels::gemv_batch_with<S>(&job, 1, ldb, N, K);
      report(std::memcmp(y0, y1, N * sizeof(float)) == 0 && guards_intact(y1, N), "float gemv_batch", K, N);
      for (std::size_t n = 0; n < N; ++n)  // At = Aᵀ: (N, K)
        for (std::size_t k = 0; k < K; ++k) At[n * K + k] = A[k * ldb + n];
      sf::kernels::ref::gemv(y0, x, A, ldb, N, K, static_cast<const float*>(nullptr));
      std::memset(y1, 0x55, sizeof y1);
      sf::kernels::gemv_rows(y1, x, At, K, N, K);
      report(std::memcmp(y0, y1, N * sizeof(float)) == 0 && guards_intact(y1, N), "float gemv_rows", K, N);
      ++shapes;
    }
  summary("float gemv, gemv_batch, gemv_rows = ref::gemv", shapes, before);
}
}  // namespace

int main() {
  check_q8();
  check_gemv();
  board::line() << "kernel check: " << failures << " failures\n";
  return failures == 0 ? 0 : 1;
}
