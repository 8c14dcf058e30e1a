#include "git/loose_object_check.h"

#include <fmt/core.h>
#include <zlib.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <memory>

namespace apexnpu::git {

namespace {

// A header longer than this is not one git writes ("commit 18446744073709551615\0" is 28 bytes).
constexpr std::size_t kHeaderLimit = 64;

class Inflater {
 public:
  explicit Inflater(std::string_view in) {
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    stream_.avail_in = static_cast<uInt>(in.size());
    ok_ = inflateInit(&stream_) == Z_OK;
  }
  ~Inflater() {
    if (ok_) inflateEnd(&stream_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  bool ok() const { return ok_; }

  // Inflates into `out` (at most `room` bytes); returns zlib's status and how many bytes came.
  std::pair<int, std::size_t> next(unsigned char* out, std::size_t room) {
    stream_.next_out = out;
    stream_.avail_out = static_cast<uInt>(room);
    const int rc = inflate(&stream_, Z_NO_FLUSH);
    return {rc, room - stream_.avail_out};
  }
  bool input_left() const { return stream_.avail_in > 0; }

 private:
  z_stream stream_{};
  bool ok_ = false;
};

bool is_object_type(std::string_view type) {
  return type == "blob" || type == "tree" || type == "commit" || type == "tag";
}

}  // namespace

std::optional<std::string> loose_object_damage(std::string_view compressed) {
  if (compressed.size() > UINT32_MAX) return "it is larger than a loose object can be";
  Inflater inflater(compressed);
  if (!inflater.ok()) return "zlib cannot be started";
  std::array<unsigned char, 1 << 14> buffer;
  std::string header;
  std::uint64_t claimed = 0, body = 0;
  bool header_done = false;
  for (;;) {
    const auto [rc, produced] = inflater.next(buffer.data(), buffer.size());
    std::size_t used = 0;
    if (!header_done) {
      while (used < produced && buffer[used] != 0 && header.size() < kHeaderLimit)
        header += static_cast<char>(buffer[used++]);
      if (header.size() >= kHeaderLimit) return "its header is not \"<type> <size>\" (too long)";
      if (used < produced) {  // the header's NUL
        ++used;
        header_done = true;
        const std::size_t space = header.find(' ');
        const std::string_view type = std::string_view(header).substr(0, space);
        const std::string_view size =
            space == std::string::npos ? std::string_view() : std::string_view(header).substr(space + 1);
        const auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), claimed);
        if (!is_object_type(type) || size.empty() || ec != std::errc() || end != size.data() + size.size())
          return fmt::format("its header \"{}\" is not \"<type> <size>\"", header);
      }
    }
    body += produced - used;
    if (header_done && body > claimed)
      return fmt::format("it holds more than the {} bytes its header claims", claimed);
    if (rc == Z_STREAM_END) {
      if (!header_done) return "it ends inside its header";
      if (body < claimed)
        return fmt::format("it holds {} bytes, fewer than the {} its header claims", body, claimed);
      return std::nullopt;
    }
    // No progress is possible: the input ended early, or inflate is stuck on what is left.
    if (rc == Z_BUF_ERROR)
      return inflater.input_left() ? "its zlib data is damaged" : "its zlib data is cut short";
    if (rc != Z_OK) return "its zlib data is damaged";
  }
}

}  // namespace apexnpu::git
