#pragma once
// The wheel's RECORD: one CSV row per file, `path,sha256=<urlsafe base64, no padding>,size`,
// and RECORD's own row with empty hash and size.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/expected.h"

namespace apexnpu::wheel {

// Wheel contents: path inside the wheel ('/'-separated) -> bytes. std::map keeps them sorted.
using WheelFiles = std::map<std::string, std::string>;

struct RecordRow {
  std::string path;
  std::string hash;  // "sha256=..." or empty
  std::string size;  // decimal or empty
  std::size_t line = 0;
};

std::string urlsafe_b64_nopad(std::string_view bytes);
// Decodes urlsafe base64 without padding; nullopt on any character outside the alphabet.
std::optional<std::string> urlsafe_b64_decode(std::string_view text);
std::string record_hash(std::string_view bytes);  // "sha256=..."

// Every file of `files` except `record_path` gets a row; the RECORD row comes last.
std::string format_record(const WheelFiles& files, const std::string& record_path);
// CSV per RFC 4180 (quoted fields, doubled quotes). A malformed line is a failure naming it,
// which verify lists with the wheel's other findings.
Expected<std::vector<RecordRow>> parse_record(std::string_view text);

}  // namespace apexnpu::wheel
