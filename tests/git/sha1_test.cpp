// SHA-1: the FIPS test vectors, and the CPU's SHA instructions against the portable code on
// every length around the block boundaries and on data fed in odd pieces.
#include <gtest/gtest.h>

#include <random>

#include "core/hex.h"
#include "core/sha1.h"

namespace apexnpu {
namespace {

std::string hex(const Sha1::Digest& d) { return to_hex(d); }

TEST(Sha1, GivesTheStandardsDigests) {
  for (auto engine : {Sha1::Engine::best, Sha1::Engine::portable}) {
    EXPECT_EQ(hex(Sha1(engine).finish()), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    EXPECT_EQ(hex(Sha1(engine).update("abc").finish()), "a9993e364706816aba3e25717850c26c9cd0d89d");
    EXPECT_EQ(hex(Sha1(engine).update("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq").finish()),
              "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    Sha1 million(engine);
    const std::string thousand(1000, 'a');
    for (int i = 0; i < 1000; ++i) million.update(thousand);
    EXPECT_EQ(hex(million.finish()), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  }
}

TEST(Sha1, TheCpusInstructionsAgreeWithThePortableCode) {
  std::mt19937 rng(7);
  std::string bytes(5000, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  for (std::size_t size = 0; size < bytes.size(); size += size < 200 ? 1 : 97) {
    const std::string_view data(bytes.data(), size);
    const auto expected = Sha1(Sha1::Engine::portable).update(data).finish();
    EXPECT_EQ(hex(Sha1().update(data).finish()), hex(expected)) << size;
    Sha1 pieces;  // fed in pieces of 1 to 70 bytes
    for (std::size_t at = 0; at < size;) {
      const std::size_t n = std::min<std::size_t>(size - at, 1 + rng() % 70);
      pieces.update(data.substr(at, n));
      at += n;
    }
    EXPECT_EQ(hex(pieces.finish()), hex(expected)) << size << " in pieces";
  }
}

}  // namespace
}  // namespace apexnpu
