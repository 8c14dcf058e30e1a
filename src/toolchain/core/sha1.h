#pragma once
// SHA-1 (FIPS 180-4), our own like Sha256: git names objects by it, and make-patch hashes every
// file of the edited tree with it. Blocks are compressed with the CPU's SHA instructions where
// it has them (x86 SHA-NI), else in portable code; both give the same digest.
#include <array>
#include <cstdint>
#include <string_view>

#include "core/hash_blocks.h"

namespace apexnpu {

class Sha1 {
 public:
  using Digest = std::array<std::uint8_t, 20>;
  enum class Engine { best, portable };  // portable: for tests of the other one

  explicit Sha1(Engine engine = Engine::best);
  Sha1& update(std::string_view bytes);
  Digest finish();  // the object is spent afterwards

 private:
  void compress(const std::uint8_t* blocks, std::size_t count);

  std::array<std::uint32_t, 5> state_;
  HashBlocks blocks_;
  bool use_sha_instructions_;
};

}  // namespace apexnpu
