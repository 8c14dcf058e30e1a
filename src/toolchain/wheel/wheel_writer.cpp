#include "wheel/wheel_writer.h"

#include <fmt/core.h>

#include "core/error.h"
#include "fs/file_io.h"
#include "wheel/metadata.h"
#include "wheel/pep440.h"
#include "wheel/wheel_tags.h"
#include "wheel/zip_archive.h"

namespace apexnpu::wheel {
namespace stdfs = std::filesystem;

std::string add_dist_info(WheelFiles& files, const WheelIdentity& id, const stdfs::path& templates_dir,
                          const std::map<std::string, std::string>& extra_files) {
  const std::string di = dist_info_dir(id.name, id.version);
  std::string tag_lines;  // one Tag line per tag the (compressed) tag stands for
  for (const auto& tag : expand_tag(id.tag)) {
    if (!tag_lines.empty()) tag_lines += '\n';
    tag_lines.append("Tag: ").append(tag);
  }
  const std::map<std::string, std::string> values = {{"name", id.name},
                                                     {"version", id.version},
                                                     {"tag", id.tag},
                                                     {"tag_lines", tag_lines},
                                                     {"platform", id.platform},
                                                     {"apexnpu_version", id.apexnpu_version},
                                                     {"purelib", id.purelib ? "true" : "false"}};
  files[di + "/METADATA"] = render_wheel_template(templates_dir, id.metadata_template, values);
  files[di + "/WHEEL"] = render_wheel_template(templates_dir, "WHEEL", values);
  std::string top;
  for (const auto& t : id.top_level) top += t + "\n";
  files[di + "/top_level.txt"] = top;
  for (const auto& [name, bytes] : extra_files) files[di + "/" + name] = bytes;
  const std::string record = di + "/RECORD";
  files.erase(record);
  files[record] = format_record(files, record);
  return di;
}

std::uint32_t wheel_file_mode(const std::string& path) { return path.ends_with(".so") ? 0100755 : 0100644; }

void write_layout(const WheelFiles& files, const stdfs::path& dir) {
  std::error_code ec;
  stdfs::create_directory(dir, ec);
  if (ec) throw Error(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  for (const auto& [path, bytes] : files) {
    const stdfs::path target = dir / path;
    stdfs::create_directories(target.parent_path(), ec);
    if (ec) throw Error(fmt::format("cannot create {}: {}", target.parent_path().string(), ec.message()));
    write_file_atomic(target, bytes, stdfs::perms(wheel_file_mode(path) & 0777));
  }
}

std::string build_wheel_zip(const WheelFiles& files, const std::string& dist_info, std::int64_t unix_time) {
  std::vector<ZipEntry> entries, dist_entries;
  const std::string record = dist_info + "/RECORD";
  for (const auto& [path, bytes] : files) {  // std::map: already sorted bytewise
    ZipEntry e{path, bytes, wheel_file_mode(path)};
    if (path == record) continue;
    (path.starts_with(dist_info + "/") ? dist_entries : entries).push_back(std::move(e));
  }
  entries.insert(entries.end(), std::make_move_iterator(dist_entries.begin()),
                 std::make_move_iterator(dist_entries.end()));
  if (auto it = files.find(record); it != files.end())
    entries.push_back({record, it->second, wheel_file_mode(record)});
  return write_zip(entries, unix_time);
}

}  // namespace apexnpu::wheel
