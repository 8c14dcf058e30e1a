#include "core/sha1.h"

#include <cstring>
#include <utility>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace apexnpu {
namespace {

constexpr std::uint32_t rotl(std::uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

void compress_portable(std::array<std::uint32_t, 5>& state, const std::uint8_t* block) {
  std::uint32_t w[80];
  for (int i = 0; i < 16; ++i)
    w[i] = (std::uint32_t{block[4 * i]} << 24) | (std::uint32_t{block[4 * i + 1]} << 16) |
           (std::uint32_t{block[4 * i + 2]} << 8) | std::uint32_t{block[4 * i + 3]};
  for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  auto [a, b, c, d, e] = state;
  for (int i = 0; i < 80; ++i) {
    std::uint32_t f, k;
    if (i < 20) f = (b & c) | (~b & d), k = 0x5a827999;
    else if (i < 40) f = b ^ c ^ d, k = 0x6ed9eba1;
    else if (i < 60) f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
    else f = b ^ c ^ d, k = 0xca62c1d6;
    const std::uint32_t t = rotl(a, 5) + f + e + k + w[i];
    e = d, d = c, c = rotl(b, 30), b = a, a = t;
  }
  state[0] += a, state[1] += b, state[2] += c, state[3] += d, state[4] += e;
}

#if defined(__x86_64__)
// Twenty groups of four rounds. `e` comes in as the E input of the group's rounds (group 0
// adds it to the words; later groups derive it from the ABCD the previous group started with)
// and leaves as the ABCD this group started with. The message schedule runs ahead: group g's
// words take sha1msg1 at g+1, the xor at g+2 and sha1msg2 at g+3, completing group g+4's words.
#define APEXNPU_SHA_TARGET __attribute__((target("sha,sse4.1"), always_inline))
template <int G>
APEXNPU_SHA_TARGET inline void sha_group(__m128i& abcd, __m128i& e, __m128i (&msg)[4]) {
  const __m128i m = msg[G % 4];
  if constexpr (G == 0) e = _mm_add_epi32(e, m);
  else e = _mm_sha1nexte_epu32(e, m);
  const __m128i started = abcd;
  abcd = _mm_sha1rnds4_epu32(abcd, e, G / 5);
  e = started;
  if constexpr (G >= 1 && G <= 16) msg[(G + 3) % 4] = _mm_sha1msg1_epu32(msg[(G + 3) % 4], m);
  if constexpr (G >= 2 && G <= 17) msg[(G + 2) % 4] = _mm_xor_si128(msg[(G + 2) % 4], m);
  if constexpr (G >= 3 && G <= 18) msg[(G + 1) % 4] = _mm_sha1msg2_epu32(msg[(G + 1) % 4], m);
}

template <int... G>
APEXNPU_SHA_TARGET inline void sha_groups(__m128i& abcd, __m128i& e, __m128i (&msg)[4],
                                          std::integer_sequence<int, G...>) {
  (sha_group<G>(abcd, e, msg), ...);
}

__attribute__((target("sha,sse4.1"))) void compress_sha_ni(std::array<std::uint32_t, 5>& state,
                                                           const std::uint8_t* blocks, std::size_t count) {
  const __m128i byte_swap = _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
  __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state.data())), 0x1b);
  __m128i e0 = _mm_set_epi32(static_cast<int>(state[4]), 0, 0, 0);
  for (; count > 0; --count, blocks += 64) {
    const __m128i abcd_before = abcd, e_before = e0;
    __m128i msg[4];
    for (int i = 0; i < 4; ++i)
      msg[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks + 16 * i)), byte_swap);
    __m128i e = e0;
    sha_groups(abcd, e, msg, std::make_integer_sequence<int, 20>{});
    e0 = _mm_sha1nexte_epu32(e, e_before);
    abcd = _mm_add_epi32(abcd, abcd_before);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state.data()), _mm_shuffle_epi32(abcd, 0x1b));
  state[4] = static_cast<std::uint32_t>(_mm_extract_epi32(e0, 3));
}

// CPUID: leaf 1 ECX has SSSE3 (bit 9) and SSE4.1 (bit 19), leaf 7 EBX has SHA (bit 29).
bool has_sha_instructions() {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) == 0 || (c & (1u << 9)) == 0 || (c & (1u << 19)) == 0)
      return false;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) != 0 && (b & (1u << 29)) != 0;
  }();
  return has;
}
#else
bool has_sha_instructions() { return false; }
#endif

}  // namespace

Sha1::Sha1(Engine engine)
    : state_{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0},
      use_sha_instructions_(engine == Engine::best && has_sha_instructions()) {}

void Sha1::compress(const std::uint8_t* blocks, std::size_t count) {
#if defined(__x86_64__)
  if (use_sha_instructions_) return compress_sha_ni(state_, blocks, count);
#endif
  for (std::size_t i = 0; i < count; ++i) compress_portable(state_, blocks + 64 * i);
}

Sha1& Sha1::update(std::string_view bytes) {
  blocks_.update(bytes, [this](const std::uint8_t* b, std::size_t n) { compress(b, n); });
  return *this;
}

Sha1::Digest Sha1::finish() {
  blocks_.finish([this](const std::uint8_t* b, std::size_t n) { compress(b, n); });
  Digest digest;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) digest[4 * i + j] = static_cast<std::uint8_t>(state_[i] >> (24 - 8 * j));
  return digest;
}

}  // namespace apexnpu
