#include "wheel/zip_archive.h"

#include <fmt/core.h>
#include <zlib.h>

#include <algorithm>
#include <ctime>
#include <memory>

#include "core/error.h"
#include "core/text_bytes.h"
#include "wheel/member_names.h"
#include "wheel/zip_reader.h"
#include "wheel/zip_signatures.h"

namespace apexnpu::wheel {
namespace {

void put16(std::string& o, std::uint32_t v) {
  o += static_cast<char>(v & 0xff);
  o += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& o, std::uint32_t v) {
  put16(o, v & 0xffff);
  put16(o, v >> 16);
}

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
    // A name the readers would take differently never reaches the archive; so the UTF-8 flag
    // is only ever set on valid UTF-8.
    if (auto problem = member_name_problem(e.name))
      throw Error(fmt::format("cannot put {} in a wheel: the name {}", printable_name(e.name), *problem));
    const std::uint32_t flags = is_ascii(e.name) ? 0 : 0x0800;
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
  const ZipReader reader(z, source);
  std::vector<ZipEntry> entries;
  for (const ZipMember& m : reader.members()) entries.push_back({m.name, reader.read(m), m.mode});
  return entries;
}

}  // namespace apexnpu::wheel
