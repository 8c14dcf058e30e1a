#include "patch/hunk_parser.h"

#include <fmt/core.h>

#include "patch/lines.h"

namespace apexnpu::patch {

namespace {

// Counts above this are refused before anything is sized from them.
constexpr std::int64_t max_hunk_number = 100'000'000;

constexpr std::string_view marker_inside =
    "malformed hunk: a '\\ No newline at end of file' marker inside it (only the last line of "
    "each side may lack a newline)";

std::int64_t read_number(const PatchLines& lines, std::size_t index, std::string_view& s) {
  if (s.empty() || s.front() < '0' || s.front() > '9') lines.fail(index, "a malformed hunk header");
  std::int64_t value = 0;
  while (!s.empty() && s.front() >= '0' && s.front() <= '9') {
    value = value * 10 + (s.front() - '0');
    if (value > max_hunk_number) lines.fail(index, "a line number or count in the hunk header is too large");
    s.remove_prefix(1);
  }
  return value;
}

// "-a[,b]" or "+c[,d]"; a count left out is 1.
void read_range(const PatchLines& lines, std::size_t index, std::string_view& s, char sign,
                std::int64_t& start, std::int64_t& count) {
  if (s.empty() || s.front() != sign) lines.fail(index, "a malformed hunk header");
  s.remove_prefix(1);
  start = read_number(lines, index, s);
  count = 1;
  if (!s.empty() && s.front() == ',') {
    s.remove_prefix(1);
    count = read_number(lines, index, s);
  }
}

Hunk read_header(const PatchLines& lines, std::size_t index) {
  Hunk hunk;
  hunk.patch_line = index + 1;
  if (lines[index].find('\0') != std::string_view::npos) lines.fail(index, "a NUL byte in a header line");
  const std::string_view header = without_terminator(lines[index]);
  std::string_view s = header.substr(3);
  read_range(lines, index, s, '-', hunk.old_start, hunk.old_count);
  if (s.empty() || s.front() != ' ') lines.fail(index, "a malformed hunk header");
  s.remove_prefix(1);
  read_range(lines, index, s, '+', hunk.new_start, hunk.new_count);
  if (!s.starts_with(" @@")) lines.fail(index, "a malformed hunk header");
  hunk.header = std::string(header.substr(0, header.size() - s.size() + 3));
  return hunk;
}

void drop_newline(HunkLine& line) {
  if (ends_with_newline(line.text)) line.text.pop_back();
}

}  // namespace

Hunk parse_hunk(const PatchLines& lines, std::size_t& i) {
  Hunk hunk = read_header(lines, i);
  const std::size_t header_index = i++;
  // Every counted line takes at least one line of the patch.
  const auto remaining = static_cast<std::int64_t>(lines.size() - i);
  if (hunk.old_count > remaining || hunk.new_count > remaining)
    lines.fail(header_index, fmt::format("the hunk counts {} old and {} new lines, but the patch has only "
                                         "{} lines left (truncated, or a bad line count)",
                                         hunk.old_count, hunk.new_count, remaining));
  std::int64_t old_seen = 0, new_seen = 0;
  bool changes = false;
  std::size_t last_body_index = header_index;
  auto mismatch = [&](std::size_t index) {
    lines.fail(index, fmt::format("line counts do not match the hunk header at line {} ({} old and {} new "
                                  "lines announced, {} and {} found)",
                                  header_index + 1, hunk.old_count, hunk.new_count, old_seen, new_seen));
  };
  while (old_seen < hunk.old_count || new_seen < hunk.new_count) {
    if (i >= lines.size())
      lines.fail(header_index, fmt::format("the hunk is truncated: the patch ends after {} of {} old and "
                                           "{} of {} new lines",
                                           old_seen, hunk.old_count, new_seen, hunk.new_count));
    const std::string_view line = lines[i];
    if (line[0] == '\\') {
      // Inside the hunk a marker may only follow the line that completed its side.
      if (hunk.lines.empty() || last_body_index != i - 1) lines.fail(i, std::string(marker_inside));
      const LineKind kind = hunk.lines.back().kind;
      const bool old_done = old_seen == hunk.old_count, new_done = new_seen == hunk.new_count;
      if ((kind == LineKind::removed && !old_done) || (kind == LineKind::added && !new_done) ||
          kind == LineKind::context)
        lines.fail(i, std::string(marker_inside));
      drop_newline(hunk.lines.back());
      ++i;
      continue;
    }
    HunkLine parsed{LineKind::context, {}};
    if (line == "\n" || line == "\r\n") {
      parsed.text = std::string(line);  // an empty context line whose leading space was lost
    } else if (line[0] == ' ' || line[0] == '-' || line[0] == '+') {
      parsed.kind = static_cast<LineKind>(line[0]);
      parsed.text = std::string(line.substr(1));
    } else {
      mismatch(i);
    }
    const bool old_side = parsed.kind != LineKind::added, new_side = parsed.kind != LineKind::removed;
    if ((old_side && old_seen == hunk.old_count) || (new_side && new_seen == hunk.new_count)) mismatch(i);
    old_seen += old_side;
    new_seen += new_side;
    changes |= parsed.kind != LineKind::context;
    hunk.lines.push_back(std::move(parsed));
    last_body_index = i++;
  }
  if (!changes)
    lines.fail(header_index, "malformed hunk: it changes nothing (GNU patch refuses a hunk of context only)");
  if (i < lines.size() && lines[i].starts_with("\\")) {
    drop_newline(hunk.lines.back());
    ++i;
  }
  return hunk;
}

}  // namespace apexnpu::patch
