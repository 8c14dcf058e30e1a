#include "git/delta.h"

#include <fmt/core.h>

#include <cstdint>

#include "core/error.h"

namespace apexnpu::git {

namespace {

class DeltaReader {
 public:
  DeltaReader(std::string_view delta, const std::string& what) : delta_(delta), what_(what) {}

  bool done() const { return at_ == delta_.size(); }
  unsigned char byte() {
    if (done()) fail("cut short");
    return static_cast<unsigned char>(delta_[at_++]);
  }
  // A size: 7 bits per byte, least significant first, high bit = more follow.
  std::uint64_t size() {
    std::uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (shift > 63) fail("a size does not fit 64 bits");
      const unsigned char b = byte();
      value |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return value;
    }
  }
  // The bytes flagged by `mask`'s low `count` bits, little endian (absent bytes are zero).
  std::uint64_t flagged(unsigned mask, unsigned count) {
    std::uint64_t value = 0;
    for (unsigned i = 0; i < count; ++i)
      if (mask & (1u << i)) value |= static_cast<std::uint64_t>(byte()) << (8 * i);
    return value;
  }
  std::string_view take(std::size_t n) {
    if (delta_.size() - at_ < n) fail("cut short");
    const std::string_view bytes = delta_.substr(at_, n);
    at_ += n;
    return bytes;
  }
  [[noreturn]] void fail(const char* why) const {
    throw Error(fmt::format("cannot read {}: its delta is {}", what_, why),
                "the repository is damaged; fetch it again");
  }

 private:
  std::string_view delta_;
  std::size_t at_ = 0;
  const std::string& what_;
};

}  // namespace

std::string apply_delta(std::string_view base, std::string_view delta, const std::string& what) {
  DeltaReader in(delta, what);
  if (in.size() != base.size()) in.fail("made for a base of another size");
  const std::uint64_t size = in.size();
  if (size > delta.size() * 0x10000 + base.size()) in.fail("announcing an impossible size");
  std::string out;
  out.reserve(size);
  while (!in.done()) {
    const unsigned char op = in.byte();
    if (op & 0x80) {  // copy: 4 offset bytes and 3 size bytes, each present if flagged
      const std::uint64_t offset = in.flagged(op, 4);
      std::uint64_t length = in.flagged(op >> 4, 3);
      if (length == 0) length = 0x10000;
      if (offset > base.size() || base.size() - offset < length) in.fail("copying past its base");
      out.append(base.substr(offset, length));
    } else if (op != 0) {  // insert the next `op` bytes
      out.append(in.take(op));
    } else {
      in.fail("using the reserved instruction 0");
    }
    if (out.size() > size) in.fail("longer than it announces");
  }
  if (out.size() != size) in.fail("shorter than it announces");
  return out;
}

}  // namespace apexnpu::git
