// The native git reader on arbitrary bytes: a delta applied to a base, a loose object, and a
// pack whose index names one object at the first entry (its deltas may point anywhere before
// it). Reading may fail with apexnpu::Error, never crash, hang or read out of bounds.
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "git/delta.h"
#include "git/object_store.h"

namespace {

namespace stdfs = std::filesystem;
using apexnpu::Error;

void write(const stdfs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

// A version-2 index listing one object, `id`, at offset 12 (the first entry after the header).
std::string one_object_index(const git_oid& id) {
  std::string idx("\xfftOc", 4);
  idx += be32(2);
  for (int b = 0; b < 256; ++b) idx += be32(b >= id.id[0] ? 1 : 0);
  idx.append(reinterpret_cast<const char*>(id.id), 20);
  idx += be32(0);   // CRC
  idx += be32(12);  // offset
  idx.append(40, '\0');
  return idx;
}

const stdfs::path& scratch() {
  static const stdfs::path dir = [] {
    const stdfs::path d = stdfs::temp_directory_path() / ("git-objects-fuzz-" + std::to_string(::getpid()));
    stdfs::create_directories(d / "objects" / "pack");
    stdfs::create_directories(d / "objects" / "ab");
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::string input(reinterpret_cast<const char*>(data) + 2, size - 2);
  const std::size_t split = std::min<std::size_t>(data[1] * 4u, input.size());
  const stdfs::path objects = scratch() / "objects";
  git_oid id{};
  id.id[0] = 0xab;
  try {
    switch (data[0] % 3) {
      case 0:
        (void)apexnpu::git::apply_delta(std::string_view(input).substr(0, split),
                                        std::string_view(input).substr(split), "fuzz");
        break;
      case 1: {  // a loose object: the input deflated as it is
        uLongf length = compressBound(static_cast<uLong>(input.size()));
        std::string deflated(length, '\0');
        compress(reinterpret_cast<Bytef*>(deflated.data()), &length,
                 reinterpret_cast<const Bytef*>(input.data()), static_cast<uLong>(input.size()));
        deflated.resize(length);
        stdfs::remove_all(objects / "pack");
        stdfs::create_directories(objects / "pack");
        write(objects / "ab" / std::string(38, '0'), deflated);
        (void)apexnpu::git::ObjectStore(objects).read(id);
        break;
      }
      default: {  // a pack: header, then the input as its entries, then a checksum's room
        stdfs::remove(objects / "ab" / std::string(38, '0'));
        write(objects / "pack" / "p.idx", one_object_index(id));
        write(objects / "pack" / "p.pack", std::string("PACK", 4) + be32(2) + be32(1) + input + std::string(20, '\0'));
        (void)apexnpu::git::ObjectStore(objects).read(id);
        break;
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
