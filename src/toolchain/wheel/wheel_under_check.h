#pragma once
// A wheel's files as `verify` checks them: what it reads whole, and each file's size and digest.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/sha256.h"
#include "wheel/record.h"

namespace apexnpu::wheel {

struct FileDigest {
  std::uint64_t size = 0;
  Sha256::Digest sha256{};
};

// A wheel as verify sees it. Built in memory, `files` holds every file and `digests` may stay
// empty; loaded (load_wheel.h), `digests` has every file, streamed, and `files` only those
// verify reads: the dist-info's and the extension modules.
struct WheelUnderCheck {
  WheelFiles files;                             // path inside the wheel -> bytes
  std::optional<std::string> wheel_file_name;   // for a .whl: its file name
  std::map<std::string, FileDigest> digests{};  // path -> size and sha256
};

}  // namespace apexnpu::wheel
