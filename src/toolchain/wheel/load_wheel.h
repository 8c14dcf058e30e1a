#pragma once
// Reads a .whl file or a wheel layout directory for `verify` in bounded memory: each file is
// streamed through a fixed buffer into its size and sha256, and only the files verify reads
// whole (the dist-info's, the extension modules) are kept, up to a cap. The zip is mapped, not
// read; the reader's limits (zip_reader.h) and the name rules (member_names.h) apply to layout
// directories too. Every error names the wheel, and the file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "wheel/wheel_under_check.h"
#include "wheel/zip_reader.h"

namespace apexnpu::wheel {

// 256 MiB: room for any RECORD and METADATA and for apex's (or torch_npu's) extension modules.
inline constexpr std::uint64_t kMaxKeptBytes = std::uint64_t{256} << 20;

struct LoadLimits {
  ZipLimits zip{};                               // also bounds a layout's files and bytes
  std::uint64_t max_kept_bytes = kMaxKeptBytes;  // the files kept whole, together
};

// Throws Error when `path` is neither, cannot be read, or breaks a limit or a name rule.
WheelUnderCheck load_wheel(const std::filesystem::path& path, const LoadLimits& limits = {});
// A .whl's bytes (`source` names it in errors; its file name becomes the wheel's).
WheelUnderCheck load_wheel_zip(std::string_view bytes, const std::string& source,
                               const LoadLimits& limits = {});

}  // namespace apexnpu::wheel
