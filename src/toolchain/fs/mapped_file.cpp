#include "fs/mapped_file.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "fs/unique_fd.h"

namespace apexnpu::fs {

MappedFile::MappedFile(const std::filesystem::path& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0)
    throw Error(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) throw Error(fmt::format("{} is not a regular file", path.string()));
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ == 0) return;
  void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (mapped == MAP_FAILED)
    throw Error(fmt::format("cannot map {}: {}", path.string(), std::strerror(errno)));
  data_ = static_cast<unsigned char*>(mapped);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace apexnpu::fs
