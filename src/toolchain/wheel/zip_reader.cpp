#include "wheel/zip_reader.h"

#include <fmt/core.h>
#include <zlib.h>

#include <algorithm>
#include <memory>

#include "core/error.h"
#include "core/text_bytes.h"
#include "wheel/member_names.h"
#include "wheel/zip_signatures.h"

namespace apexnpu::wheel {
namespace {

constexpr std::uint32_t kZip64LocatorSig = 0x07064b50;
constexpr std::uint32_t kFlagEncrypted = 0x0001, kFlagDescriptor = 0x0008, kFlagUtf8 = 0x0800;
constexpr std::uint32_t kUnixHost = 3;
constexpr std::uint32_t kTypeMask = 0170000, kRegular = 0100000, kDirectory = 0040000, kSymlink = 0120000;
constexpr std::size_t kEndSize = 22, kCentralSize = 46, kLocalSize = 30;

std::uint32_t get16(std::string_view s, std::size_t at) {
  return static_cast<unsigned char>(s[at]) | (static_cast<unsigned char>(s[at + 1]) << 8);
}
std::uint32_t get32(std::string_view s, std::size_t at) { return get16(s, at) | (get16(s, at + 2) << 16); }

}  // namespace

ZipReader::ZipReader(std::string_view bytes, std::string source, ZipLimits limits)
    : bytes_(bytes), source_(std::move(source)), limits_(limits) {
  const std::string_view z = bytes_;
  if (z.size() < kEndSize) throw Error(fmt::format("{}: not a valid zip archive (too short)", source_));
  // The end record is last, followed only by its comment (at most 65535 bytes).
  std::size_t end = std::string_view::npos;
  for (std::size_t i = z.size() - kEndSize + 1; i-- > 0 && z.size() - i <= kEndSize + 65535;)
    if (get32(z, i) == kEndSig && i + kEndSize + get16(z, i + 20) == z.size()) {
      end = i;
      break;
    }
  if (end == std::string_view::npos)
    throw Error(fmt::format("{}: not a valid zip archive (no end of central directory)", source_));
  read_central_directory(end);
}

void ZipReader::read_central_directory(std::size_t end) {
  const std::string_view z = bytes_;
  auto bad = [&](const std::string& why) {
    return Error(fmt::format("{}: not a valid zip archive ({})", source_, why));
  };
  const std::size_t count = get16(z, end + 10), central_size = get32(z, end + 12),
                    central_offset = get32(z, end + 16);
  if (get16(z, end + 4) != 0 || get16(z, end + 6) != 0 || get16(z, end + 8) != count)
    throw bad("split over several disks");
  if ((end >= 20 && get32(z, end - 20) == kZip64LocatorSig) || count == 0xffff ||
      central_offset == 0xffffffff)
    throw bad("zip64, which wheels of this size do not need and apexnpu does not read");
  if (count > limits_.max_entries)
    throw Error(fmt::format("{}: {} entries, more than the {} allowed", source_, count, limits_.max_entries));
  // Offsets and sizes are 32-bit fields: all arithmetic on them in size_t, so none wraps.
  if (central_offset > end || end - central_offset != central_size)
    throw bad("the central directory is not where the end record says");
  MemberNames names;
  std::uint64_t declared = 0;
  std::size_t at = central_offset;
  for (std::size_t n = 0; n < count; ++n) {
    if (end - at < kCentralSize || get32(z, at) != kCentralSig) throw bad("damaged central directory");
    const std::size_t name_len = get16(z, at + 28), extra_len = get16(z, at + 30),
                      comment_len = get16(z, at + 32);
    if (end - at - kCentralSize < name_len + extra_len + comment_len) throw bad("damaged central directory");
    ZipMember m;
    m.name = std::string(z.substr(at + kCentralSize, name_len));
    const std::uint32_t flags = get16(z, at + 8), attrs = get32(z, at + 38);
    m.method = get16(z, at + 10);
    m.crc = get32(z, at + 16);
    m.compressed_size = get32(z, at + 20);
    m.size = get32(z, at + 24);
    m.mode = (get16(z, at + 4) >> 8) == kUnixHost ? attrs >> 16 : 0;
    m.directory = m.name.ends_with('/');
    auto entry_error = [&](const std::string& why) {
      return Error(fmt::format("{}: entry {}: {}", source_, printable_name(m.name), why));
    };
    if (auto problem = member_name_problem(m.name)) throw entry_error("the name " + *problem);
    if (!is_ascii(m.name) && !(flags & kFlagUtf8))
      throw entry_error("a non-ASCII name without the UTF-8 flag (readers decode it as CP437)");
    if (flags & kFlagEncrypted) throw entry_error("encrypted");
    if (m.method != 0 && m.method != 8)
      throw entry_error(fmt::format("compression method {} (only stored and deflate)", m.method));
    const std::uint32_t type = m.mode & kTypeMask;
    if (type == kSymlink) throw entry_error("a symlink (a wheel holds regular files only)");
    if (type != 0 && type != (m.directory ? kDirectory : kRegular))
      throw entry_error(fmt::format("not a regular file (mode {:o})", m.mode));
    if (m.directory && m.size != 0) throw entry_error("a directory with content");
    if (m.method == 0 && m.size != m.compressed_size) throw entry_error("stored, with two different sizes");
    // Deflate expands at most 1032 times: a size beyond that is a lie.
    if (m.method == 8 && m.size / 1032 > m.compressed_size + 1)
      throw entry_error(fmt::format("claims {} bytes from {}", m.size, m.compressed_size));
    declared += m.size;
    if (declared > limits_.max_inflated_bytes)
      throw entry_error(
          fmt::format("the entries up to this one inflate to {} bytes, more than the {} allowed", declared,
                      limits_.max_inflated_bytes));
    const auto clash =
        m.directory ? names.add_directory(m.name.substr(0, m.name.size() - 1)) : names.add(m.name);
    if (clash) throw entry_error("the name " + *clash);
    check_local_header(m, get32(z, at + 42), flags);
    members_.push_back(std::move(m));
    at += kCentralSize + name_len + extra_len + comment_len;
  }
  if (at != end) throw bad("the central directory holds more than its entries");
  check_layout(central_offset);
}

void ZipReader::check_local_header(ZipMember& m, std::size_t local, std::uint32_t flags) {
  const std::string_view z = bytes_;
  auto entry_error = [&](const std::string& why) {
    return Error(fmt::format("{}: entry {}: {}", source_, printable_name(m.name), why));
  };
  if (local > z.size() || z.size() - local < kLocalSize || get32(z, local) != kLocalSig)
    throw entry_error("no local header where the central directory points");
  const std::size_t name_len = get16(z, local + 26), extra_len = get16(z, local + 28);
  if (z.size() - local - kLocalSize < name_len + extra_len) throw entry_error("truncated");
  // Extractors that read local headers must see the same entry as those that read the central
  // directory: a different name there could write anywhere (`../../x.py`).
  const std::string_view local_name = z.substr(local + kLocalSize, name_len);
  if (local_name != m.name)
    throw entry_error(fmt::format("the local header names it differently ('{}')",
                                  printable_name(local_name.substr(0, 200))));
  const std::uint32_t local_flags = get16(z, local + 6);
  if (((local_flags ^ flags) & (kFlagEncrypted | kFlagUtf8 | kFlagDescriptor)) != 0 ||
      get16(z, local + 8) != m.method)
    throw entry_error("the local header's flags or method differ from the central directory's");
  if (!(flags & kFlagDescriptor) &&
      (get32(z, local + 14) != m.crc || get32(z, local + 18) != m.compressed_size ||
       get32(z, local + 22) != m.size))
    throw entry_error("the local header's CRC or sizes differ from the central directory's");
  m.data_offset = local + kLocalSize + name_len + extra_len;
  if (z.size() - m.data_offset < m.compressed_size) throw entry_error("truncated");
  spans_.emplace_back(local, m.data_offset + m.compressed_size);
}

void ZipReader::check_layout(std::size_t central_offset) {
  // Entries that share bytes are the overlapping zip bomb (or damage): each entry's header and
  // data must be its own, and all of them before the central directory.
  std::vector<std::size_t> order(spans_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return spans_[a] < spans_[b]; });
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto& [begin, end] = spans_[order[k]];
    const std::size_t limit = k + 1 < order.size() ? spans_[order[k + 1]].first : central_offset;
    if (end > limit)
      throw Error(
          fmt::format("{}: entry {}: overlaps {} (entries sharing data: a zip bomb, or a damaged archive)",
                      source_, printable_name(members_[order[k]].name),
                      k + 1 < order.size() ? "entry " + printable_name(members_[order[k + 1]].name)
                                           : std::string("the central directory")));
  }
  spans_.clear();
  spans_.shrink_to_fit();
}

void ZipReader::stream(const ZipMember& m, const std::function<void(std::string_view)>& sink) const {
  auto entry_error = [&](const std::string& why) {
    return Error(fmt::format("{}: entry {}: {}", source_, printable_name(m.name), why));
  };
  const std::string_view data = bytes_.substr(m.data_offset, m.compressed_size);
  uLong crc = crc32(0, nullptr, 0);
  std::uint64_t produced = 0;
  auto emit = [&](const char* p, std::size_t n) {
    produced += n;
    if (produced > m.size) throw entry_error(fmt::format("inflates past its declared {} bytes", m.size));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(p), static_cast<uInt>(n));
    sink(std::string_view(p, n));
  };
  if (m.method == 0) {
    for (std::size_t at = 0; at < data.size(); at += kChunkBytes)
      emit(data.data() + at, std::min(kChunkBytes, data.size() - at));
  } else {
    z_stream zs{};
    if (inflateInit2(&zs, -15) != Z_OK) throw Error("zlib: inflateInit2 failed");
    std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
    std::unique_ptr<char[]> buffer(new char[kChunkBytes]);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    zs.avail_in = static_cast<uInt>(data.size());
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      zs.next_out = reinterpret_cast<Bytef*>(buffer.get());
      zs.avail_out = static_cast<uInt>(kChunkBytes);
      rc = inflate(&zs, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END) throw entry_error("damaged deflate data");
      emit(buffer.get(), kChunkBytes - zs.avail_out);
    }
  }
  if (produced != m.size)
    throw entry_error(fmt::format("inflates to {} bytes, not the {} declared", produced, m.size));
  if (crc != m.crc) throw entry_error("CRC mismatch");
}

std::string ZipReader::read(const ZipMember& m) const {
  std::string out;
  out.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(m.size, kChunkBytes * 16)));
  stream(m, [&](std::string_view piece) { out.append(piece); });
  return out;
}

}  // namespace apexnpu::wheel
