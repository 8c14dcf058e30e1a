#include "wheel/zip_archive.h"

#include <fmt/core.h>
#include <zlib.h>

#include <algorithm>
#include <ctime>
#include <memory>

#include "core/error.h"

namespace apexnpu::wheel {
namespace {

constexpr std::uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;

void put16(std::string& o, std::uint32_t v) {
  o += static_cast<char>(v & 0xff);
  o += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& o, std::uint32_t v) {
  put16(o, v & 0xffff);
  put16(o, v >> 16);
}
std::uint32_t get16(std::string_view s, std::size_t at) {
  return static_cast<unsigned char>(s[at]) | (static_cast<unsigned char>(s[at + 1]) << 8);
}
std::uint32_t get32(std::string_view s, std::size_t at) { return get16(s, at) | (get16(s, at + 2) << 16); }

std::string deflate_raw(std::string_view in) {
  z_stream z{};
  if (deflateInit2(&z, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error("zlib: deflateInit2 failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&z, deflateEnd);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw Error("zlib: deflate did not finish");
  out.resize(z.total_out);
  return out;
}

std::string inflate_raw(std::string_view in, std::size_t expected, const std::string& what) {
  z_stream z{};
  if (inflateInit2(&z, -15) != Z_OK) throw Error("zlib: inflateInit2 failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&z, inflateEnd);
  std::string out(expected, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&z, Z_FINISH);
  if (rc != Z_STREAM_END || z.total_out != expected)
    throw Error(fmt::format("{}: damaged deflate data", what));
  return out;
}

std::uint32_t crc_of(std::string_view s) {
  return static_cast<std::uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

std::pair<std::uint32_t, std::uint32_t> dos_time_date(std::int64_t unix_time) {
  const std::time_t t = static_cast<std::time_t>(std::max(unix_time, kZipEpochMin));
  std::tm tm{};
  gmtime_r(&t, &tm);
  const int year = std::min(tm.tm_year + 1900, 2107);
  const std::uint32_t time = (tm.tm_hour << 11) | (tm.tm_min << 5) | (tm.tm_sec / 2);
  const std::uint32_t date = ((year - 1980) << 9) | ((tm.tm_mon + 1) << 5) | tm.tm_mday;
  return {time, date};
}

}  // namespace

std::string write_zip(const std::vector<ZipEntry>& entries, std::int64_t unix_time) {
  const auto [time, date] = dos_time_date(unix_time);
  std::string out, central;
  for (const auto& e : entries) {
    const std::string data = deflate_raw(e.bytes);
    const std::uint32_t crc = crc_of(e.bytes);
    const bool utf8 = std::any_of(e.name.begin(), e.name.end(),
                                  [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
    const std::uint32_t flags = utf8 ? 0x0800 : 0;
    if (out.size() > 0xfffffff0u || e.bytes.size() > 0xfffffff0u)
      throw Error("wheel too large for a zip without zip64");
    const auto offset = static_cast<std::uint32_t>(out.size());
    put32(out, kLocalSig);
    put16(out, 20);
    put16(out, flags);
    put16(out, 8);
    put16(out, time);
    put16(out, date);
    put32(out, crc);
    put32(out, static_cast<std::uint32_t>(data.size()));
    put32(out, static_cast<std::uint32_t>(e.bytes.size()));
    put16(out, static_cast<std::uint32_t>(e.name.size()));
    put16(out, 0);
    out += e.name;
    out += data;

    put32(central, kCentralSig);
    put16(central, (3 << 8) | 20);  // made by Unix, zip 2.0
    put16(central, 20);
    put16(central, flags);
    put16(central, 8);
    put16(central, time);
    put16(central, date);
    put32(central, crc);
    put32(central, static_cast<std::uint32_t>(data.size()));
    put32(central, static_cast<std::uint32_t>(e.bytes.size()));
    put16(central, static_cast<std::uint32_t>(e.name.size()));
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put32(central, e.mode << 16);
    put32(central, offset);
    central += e.name;
  }
  const auto central_offset = static_cast<std::uint32_t>(out.size());
  out += central;
  put32(out, kEndSig);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<std::uint32_t>(entries.size()));
  put16(out, static_cast<std::uint32_t>(entries.size()));
  put32(out, static_cast<std::uint32_t>(central.size()));
  put32(out, central_offset);
  put16(out, 0);
  return out;
}

std::vector<ZipEntry> read_zip(std::string_view z, const std::string& source) {
  auto bad = [&](const std::string& why) {
    return Error(fmt::format("{}: not a valid zip archive ({})", source, why));
  };
  if (z.size() < 22) throw bad("too short");
  std::size_t end = std::string_view::npos;
  for (std::size_t i = z.size() - 22 + 1; i-- > 0 && z.size() - i <= 22 + 65535;)
    if (get32(z, i) == kEndSig) {
      end = i;
      break;
    }
  if (end == std::string_view::npos) throw bad("no end of central directory");
  const std::uint32_t count = get16(z, end + 10);
  // Offsets and sizes are 32-bit fields: all arithmetic on them in size_t, so none wraps.
  std::size_t at = get32(z, end + 16);
  std::vector<ZipEntry> entries;
  for (std::uint32_t n = 0; n < count; ++n) {
    if (at > z.size() || z.size() - at < 46 || get32(z, at) != kCentralSig)
      throw bad("damaged central directory");
    const std::uint32_t method = get16(z, at + 10), crc = get32(z, at + 16);
    const std::size_t csize = get32(z, at + 20), usize = get32(z, at + 24);
    const std::size_t name_len = get16(z, at + 28), extra_len = get16(z, at + 30),
                      comment_len = get16(z, at + 32);
    const std::uint32_t attrs = get32(z, at + 38);
    const std::size_t local = get32(z, at + 42);
    if (z.size() - at - 46 < name_len) throw bad("damaged central directory");
    ZipEntry e;
    e.name = std::string(z.substr(at + 46, name_len));
    e.mode = attrs >> 16;
    at += 46 + name_len + extra_len + comment_len;
    if (local > z.size() || z.size() - local < 30 || get32(z, local) != kLocalSig)
      throw bad("damaged entry " + e.name);
    const std::size_t data_at = local + 30 + get16(z, local + 26) + get16(z, local + 28);
    if (data_at > z.size() || z.size() - data_at < csize) throw bad("truncated entry " + e.name);
    const std::string_view data = z.substr(data_at, csize);
    if (method == 0) {
      e.bytes = std::string(data);
    } else if (method == 8) {
      // Deflate expands at most 1032 times: a size beyond that is a lie, and not reserved.
      if (usize / 1032 > csize + 1)
        throw bad(fmt::format("entry {} claims {} bytes from {}", e.name, usize, csize));
      e.bytes = inflate_raw(data, usize, source + ": " + e.name);
    } else {
      throw bad(fmt::format("entry {} uses compression method {}", e.name, method));
    }
    if (crc_of(e.bytes) != crc) throw bad("CRC mismatch in " + e.name);
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace apexnpu::wheel
