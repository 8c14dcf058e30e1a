#pragma once
// SHA-256 (FIPS 180-4), our own so the toolchain needs no crypto library. Used for the object
// cache keys, RECORD hashes and the manifest digests.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/hash_blocks.h"

namespace apexnpu {

class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256();
  Sha256& update(std::string_view bytes);
  Digest finish();  // the object is spent afterwards

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  HashBlocks blocks_;
};

Sha256::Digest sha256(std::string_view bytes);
std::string to_hex(const Sha256::Digest& digest);
std::string sha256_hex(std::string_view bytes);

}  // namespace apexnpu
