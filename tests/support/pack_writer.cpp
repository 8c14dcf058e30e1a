#include "support/pack_writer.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "support/test_support.h"

namespace apexnpu::test {

namespace {

void put32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

std::string varint(std::size_t n) {
  std::string out;
  do {
    unsigned char b = n & 0x7f;
    n >>= 7;
    if (n != 0) b |= 0x80;
    out += static_cast<char>(b);
  } while (n != 0);
  return out;
}

std::string entry_header(int type, std::size_t size) {
  std::string out;
  unsigned char b = static_cast<unsigned char>((type << 4) | (size & 0x0f));
  size >>= 4;
  while (size != 0) {
    out += static_cast<char>(b | 0x80);
    b = size & 0x7f;
    size >>= 7;
  }
  out += static_cast<char>(b);
  return out;
}

std::string deflate(const std::string& in) {
  uLongf size = compressBound(static_cast<uLong>(in.size()));
  std::string out(size, '\0');
  if (compress(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(in.data()),
               static_cast<uLong>(in.size())) != Z_OK)
    throw std::runtime_error("compress failed");
  out.resize(size);
  return out;
}

const std::string kTrailer(20, '\x5a');  // the pack's "checksum", recorded in the index too

}  // namespace

std::string zlib(const std::string& bytes) { return deflate(bytes); }

std::filesystem::path loose_path(const std::filesystem::path& objects_dir, const git_oid& id) {
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &id);
  return objects_dir / std::string(hex, 2) / std::string(hex + 2);
}

git_oid write_loose(const std::filesystem::path& objects_dir, int type, const std::string& data) {
  static const char* const names[] = {"", "commit", "tree", "blob", "tag"};
  const git_oid id = object_id(type, data);
  write_file(loose_path(objects_dir, id),
             deflate(std::string(names[type]) + " " + std::to_string(data.size()) + '\0' + data));
  return id;
}

git_oid object_id(int type, const std::string& data) {
  git_oid id;
  if (git_odb_hash(&id, data.data(), data.size(), static_cast<git_object_t>(type)) != 0)
    throw std::runtime_error("git_odb_hash failed");
  return id;
}

std::string insert_delta(std::size_t base_size, const std::string& result) {
  std::string delta = varint(base_size) + varint(result.size());
  for (std::size_t at = 0; at < result.size(); at += 127) {
    const std::string chunk = result.substr(at, 127);
    delta += static_cast<char>(chunk.size());
    delta += chunk;
  }
  return delta;
}

std::filesystem::path write_pack(const std::filesystem::path& objects_dir, const std::string& name,
                                 const std::vector<PackEntry>& entries) {
  std::string pack = "PACK";
  put32(pack, 2);
  put32(pack, static_cast<std::uint32_t>(entries.size()));
  std::vector<std::pair<git_oid, std::uint32_t>> offsets;
  for (const PackEntry& e : entries) {
    offsets.emplace_back(e.id, static_cast<std::uint32_t>(pack.size()));
    pack += entry_header(e.type, e.data.size());
    if (e.type == 7) pack.append(reinterpret_cast<const char*>(e.base.id), 20);
    pack += deflate(e.data);
  }
  pack += kTrailer;
  std::sort(offsets.begin(), offsets.end(),
            [](const auto& a, const auto& b) { return std::memcmp(a.first.id, b.first.id, 20) < 0; });
  std::string index = "\xfftOc";
  put32(index, 2);
  for (unsigned byte = 0; byte < 256; ++byte)
    put32(index, static_cast<std::uint32_t>(std::count_if(
                     offsets.begin(), offsets.end(), [&](const auto& o) { return o.first.id[0] <= byte; })));
  for (const auto& o : offsets) index.append(reinterpret_cast<const char*>(o.first.id), 20);
  for (std::size_t i = 0; i < offsets.size(); ++i) put32(index, 0);  // CRCs: libgit2 reads none
  for (const auto& o : offsets) put32(index, o.second);
  index += kTrailer;
  index += std::string(20, '\0');  // the index's own checksum: not checked on reading
  const std::filesystem::path base = objects_dir / "pack" / ("pack-" + name);
  write_file(std::filesystem::path(base).replace_extension(".pack"), pack);
  write_file(std::filesystem::path(base).replace_extension(".idx"), index);
  return std::filesystem::path(base).replace_extension(".idx");
}

std::size_t index_offset_position(const std::filesystem::path& index, std::size_t i) {
  const std::string bytes = read_file(index);
  const auto count = static_cast<std::size_t>(static_cast<unsigned char>(bytes[8 + 255 * 4]) << 24 |
                                              static_cast<unsigned char>(bytes[8 + 255 * 4 + 1]) << 16 |
                                              static_cast<unsigned char>(bytes[8 + 255 * 4 + 2]) << 8 |
                                              static_cast<unsigned char>(bytes[8 + 255 * 4 + 3]));
  return 8 + 1024 + count * 24 + 4 * i;
}

}  // namespace apexnpu::test
