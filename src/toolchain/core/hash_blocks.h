#pragma once
// The 64-byte block framing SHA-1 and SHA-256 share: bytes are buffered until a block is whole
// (whole blocks of the input go to the compression function directly), and the end is padded
// with 0x80, zeros and the message's length in bits, big endian.
#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace apexnpu {

class HashBlocks {
 public:
  // `compress(const std::uint8_t* blocks, std::size_t count)` takes whole blocks.
  template <typename Compress>
  void update(std::string_view bytes, Compress&& compress) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
    std::size_t n = bytes.size();
    total_bytes_ += n;
    if (buffered_ > 0) {
      const std::size_t take = n < kBlock - buffered_ ? n : kBlock - buffered_;
      std::memcpy(buffer_.data() + buffered_, p, take);
      buffered_ += take, p += take, n -= take;
      if (buffered_ < kBlock) return;
      compress(buffer_.data(), std::size_t{1});
      buffered_ = 0;
    }
    if (n >= kBlock) compress(p, n / kBlock);
    p += n / kBlock * kBlock, n %= kBlock;
    std::memcpy(buffer_.data(), p, n);
    buffered_ = n;
  }

  template <typename Compress>
  void finish(Compress&& compress) {
    const std::uint64_t bits = total_bytes_ * 8;
    buffer_[buffered_++] = 0x80;
    if (buffered_ > kBlock - 8) {
      std::memset(buffer_.data() + buffered_, 0, kBlock - buffered_);
      compress(buffer_.data(), std::size_t{1});
      buffered_ = 0;
    }
    std::memset(buffer_.data() + buffered_, 0, kBlock - 8 - buffered_);
    for (int i = 0; i < 8; ++i) buffer_[kBlock - 8 + i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
    compress(buffer_.data(), std::size_t{1});
  }

 private:
  static constexpr std::size_t kBlock = 64;
  std::array<std::uint8_t, kBlock> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

}  // namespace apexnpu
