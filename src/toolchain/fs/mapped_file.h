#pragma once
// A whole file mapped read-only, unmapped when it goes away: pack files are read in place
// instead of copied into memory.
#include <cstddef>
#include <filesystem>
#include <string_view>

namespace apexnpu::fs {

class MappedFile {
 public:
  // Throws Error naming the file when it cannot be opened or mapped.
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::string_view bytes() const { return {reinterpret_cast<const char*>(data_), size_}; }

 private:
  unsigned char* data_ = nullptr;  // nullptr for an empty file (mmap refuses length 0)
  std::size_t size_ = 0;
};

}  // namespace apexnpu::fs
